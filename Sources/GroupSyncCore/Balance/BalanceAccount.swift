/// One life of a device in the balance: the device and the store epoch (store ID) it writes from.
///
/// Why not the device alone: balance records are running totals that only their writer rewrites, so
/// last-writer-wins acts as a maximum only while the writer remembers its own totals. A device whose
/// store was moved aside starts again from nothing; had it kept writing under its device ID, its newer,
/// smaller totals would replace the ones its peers hold and earned minutes would vanish. Under a new
/// epoch it writes fresh records beside the old ones, which stay as they were, and the ledger sums
/// every epoch of every device.
///
/// Text form (the `<account>` of the key table in `BalanceSuite`): `<device>@<epoch>`, or `<device>`
/// alone for the *legacy* epoch — records written before epochs were part of the keys, which the store
/// that wrote them keeps writing (see `Store.balanceEpoch`).
public struct BalanceAccount: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let device: DeviceID
    /// The store ID it writes from; `nil` for the legacy epoch.
    public let epoch: String?

    public init(device: DeviceID, epoch: String?) {
        self.device = device
        self.epoch = epoch
    }

    /// The legacy account of `device`.
    public init(_ device: DeviceID) { self.init(device: device, epoch: nil) }

    /// Reads the text form; `nil` unless it is exactly the canonical form (so one account has one key).
    public init?(parsing text: String) {
        let parts = text.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        guard let device = try? DeviceID(parsing: String(parts[0])), device.description == parts[0] else { return nil }
        if parts.count == 2 {
            guard Self.isValidEpoch(String(parts[1])) else { return nil }
            self.init(device: device, epoch: String(parts[1]))
        } else {
            self.init(device)
        }
    }

    /// An epoch must be usable as part of a key: 1–64 letters, digits, `-` or `_` (a store ID is 32 hex digits).
    public static func isValidEpoch(_ epoch: String) -> Bool {
        !epoch.isEmpty && epoch.utf8.count <= 64 && epoch.unicodeScalars.allSatisfy { s in
            (s.value >= 0x30 && s.value <= 0x39) || (s.value >= 0x41 && s.value <= 0x5A) || (s.value >= 0x61 && s.value <= 0x7A)
                || s == "-" || s == "_"
        }
    }

    public var description: String { epoch.map { "\(device)@\($0)" } ?? device.description }

    /// Enough to tell accounts apart in logs.
    public var short: String { epoch.map { "\(device.short)@\($0.prefix(8))" } ?? device.short }

    public static func < (lhs: BalanceAccount, rhs: BalanceAccount) -> Bool {
        lhs.device != rhs.device ? lhs.device < rhs.device : (lhs.epoch ?? "") < (rhs.epoch ?? "")
    }
}
