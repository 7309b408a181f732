@testable import GroupSyncCore

/// A device in the pure balance tests: an in-memory replica store and a clock the test sets.
/// Replication is explicit: `sync` merges two stores both ways, as a session would.
final class BalanceDevice {
    let id: DeviceID
    var store: MemoryReplicaStore
    var paired: Set<DeviceID> = []
    var calendar: LocalCalendar
    /// How far this replica has read each other replica's history, as a session's watermark would.
    var readUpTo: [ObjectIdentifier: Int64] = [:]

    init(_ number: UInt8, calendar: LocalCalendar = .utc) {
        id = try! DeviceID(bytes: [UInt8](repeating: number, count: 32))
        store = MemoryReplicaStore(device: id, storeID: "store-\(number)")
        self.calendar = calendar
    }

    /// The account this device writes from: its device ID and its current store.
    var account: BalanceAccount { BalanceAccount(device: id, epoch: store.storeID) }

    /// `notBefore`: what the store's clock has already stamped, as the store passes it (`.min`: nothing).
    func book(at now: Int64, notBefore: Int64 = .min) -> BalanceBook {
        BalanceBook(ledger: BalanceLedger(entries: store.entries), me: account, nowMillis: now, notBeforeMillis: notBefore,
                    calendar: calendar, paired: paired, syncedWithAllPaired: true)
    }

    /// Runs one operation and commits its writes, like the CLI's store transaction.
    @discardableResult
    func act<T>(at now: Int64, notBefore: Int64 = .min, _ operate: (inout BalanceBook) -> T) -> T {
        var book = book(at: now, notBefore: notBefore)
        let result = operate(&book)
        for (key, value) in book.writes.sorted(by: { $0.key < $1.key }) {
            store.set(value, suite: BalanceSuite.name, key: key, physicalMillis: now)
        }
        return result
    }

    func summary(at now: Int64) -> BalanceSummary { book(at: now).summary }

    /// The store is moved aside: the device starts again on an empty store with a new ID, and every
    /// replica of `group` reads the new store's history from the start, as after a changed store ID.
    func moveStoreAside(newStoreID: String, group: [BalanceDevice]) {
        store = MemoryReplicaStore(device: id, storeID: newStoreID)
        readUpTo = [:]
        for other in group { other.readUpTo[ObjectIdentifier(self)] = nil }
    }

    func setPolicy(_ key: String, _ value: Value, at now: Int64) {
        store.set(value, suite: BalanceSuite.name, key: key, physicalMillis: now)
    }
}

/// Merges two replicas both ways, sending only what the other has not read yet.
func sync(_ a: BalanceDevice, _ b: BalanceDevice, at now: Int64) {
    func send(_ from: BalanceDevice, _ to: BalanceDevice) {
        let changes = from.store.changes(after: to.readUpTo[ObjectIdentifier(from)] ?? 0, limit: .max)
        guard let last = changes.last else { return }
        _ = to.store.apply(changes.map(\.entry), physicalMillis: now)
        to.readUpTo[ObjectIdentifier(from)] = last.sequence
    }
    send(a, b)
    send(b, a)
}

/// Merges every replica of a group with every other, until nothing changes.
func syncAll(_ devices: [BalanceDevice], at now: Int64) {
    for _ in 0..<2 { for a in devices { for b in devices where a !== b { sync(a, b, at: now) } } }
}

/// Devices paired with each other, with the smallest ID (device 1) founding the balance.
func pairedDevices(_ count: UInt8, calendar: LocalCalendar = .utc) -> [BalanceDevice] {
    let devices = (1...count).map { BalanceDevice($0, calendar: calendar) }
    for d in devices { d.paired = Set(devices.map(\.id)).subtracting([d.id]) }
    return devices
}

/// Runs every device's agent (as each daemon would on a change) and syncs, until the group settles.
func settle(_ devices: [BalanceDevice], at now: Int64, rounds: Int = 6) {
    for _ in 0..<rounds {
        syncAll(devices, at: now)
        for d in devices { d.act(at: now) { $0.rebalance(connected: Set(devices.map(\.id)).subtracting([d.id])) } }
    }
    syncAll(devices, at: now)
}

let minute: Int64 = 60_000
/// 2026-03-10 12:00 UTC.
let noon: Int64 = (CivilDate(year: 2026, month: 3, day: 10)!.ordinal * 86_400 + 12 * 3600) * 1000
let day: Int64 = 86_400_000
