/// Small readers for the dictionaries balance records and action requests are stored as. A field of the wrong type reads
/// as absent: a damaged or foreign record is ignored, never trusted and never a crash.
extension Value {
    var intValue: Int64? {
        switch self {
        case .int(let i): i
        case .double(let d) where d.isFinite && d.rounded() == d && abs(d) < 9e15: Int64(d)
        default: nil
        }
    }

    var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    var account: BalanceAccount? { stringValue.flatMap(BalanceAccount.init(parsing:)) }
}

extension Dictionary where Key == String, Value == GroupSyncCore.Value {
    /// A non-negative amount (ms) or count, 0 when absent, at most `BalanceAmount.maxRecordMs`: a peer's
    /// record may hold any number (see `SaturatingArithmetic.swift`), and nothing real is that large.
    func count(_ name: String) -> Int64 { Swift.min(Swift.max(0, self[name]?.intValue ?? 0), BalanceAmount.maxRecordMs) }

    /// An instant (epoch ms) that only orders events, 0 when absent, within `BalanceAmount.instantRange`.
    func instant(_ name: String) -> Int64 {
        let range = BalanceAmount.instantRange
        return Swift.min(Swift.max(range.lowerBound, self[name]?.intValue ?? 0), range.upperBound)
    }

    /// An instant that names something (a monitor's arming): `nil` when absent or out of range, since
    /// moving it into range would name something else.
    func exactInstant(_ name: String) -> Int64? {
        guard let value = self[name]?.intValue, BalanceAmount.instantRange.contains(value) else { return nil }
        return value
    }
}
