/// Small readers for the dictionaries balance records are stored as. A field of the wrong type reads
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
    /// A non-negative integer field, 0 when absent.
    func count(_ name: String) -> Int64 { Swift.max(0, self[name]?.intValue ?? 0) }
}
