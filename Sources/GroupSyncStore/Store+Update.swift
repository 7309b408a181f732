import GroupSyncCore

/// Read-modify-write of one suite in a single immediate transaction.
///
/// Plain `set` is enough for independent keys, but a decision that depends on what is stored (spend
/// only what this device holds) must not interleave with another process making the same decision:
/// two `balance spend` commands on one machine would otherwise both spend the same rights.
extension Store {
    /// Runs `decide` on the suite's live entries and stores the writes it returns, all in one
    /// transaction. Every write gets its own HLC tick, as separate `set`s would.
    public func update<T>(suite: String, _ decide: ([Entry]) throws(StoreError) -> (writes: [String: Value], result: T)) throws(StoreError) -> T {
        let (changed, result) = try database.transaction(immediate: true) { () throws(StoreError) -> (Bool, T) in
            let decision = try decide(try liveEntries(suite: suite))
            for (key, value) in decision.writes.sorted(by: { $0.key < $1.key }) {
                try Self.validate(suite: suite, key: key)
                guard value.isStorable else { throw .invalidEntry("numbers and dates must be finite") }
                _ = try stampAndWrite(suite: suite, key: key, value: value)
            }
            return (!decision.writes.isEmpty, decision.result)
        }
        if changed { didCommit?() }
        return result
    }
}
