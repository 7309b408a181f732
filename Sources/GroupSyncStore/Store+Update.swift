import GroupSyncCore

/// Read-modify-write of one suite in a single immediate transaction.
///
/// Plain `set` is enough for independent keys, but a decision that depends on what is stored (spend
/// only what this device holds) must not interleave with another process making the same decision:
/// two `balance spend` commands on one machine would otherwise both spend the same rights.
extension Store {
    /// Runs `decide` on the suite's live entries and makes the changes it returns, all in one
    /// transaction. Every write gets its own HLC tick, as separate `set`s would; deleting a key that
    /// is not live writes nothing, as `delete` does.
    public func update<T>(suite: String, _ decide: ([Entry]) throws(StoreError) -> (changes: [String: SuiteChange], result: T)) throws(StoreError) -> T {
        let (changed, result) = try database.transaction(immediate: true) { () throws(StoreError) -> (Bool, T) in
            let decision = try decide(try liveEntries(suite: suite))
            var changed = false
            for (key, change) in decision.changes.sorted(by: { $0.key < $1.key }) {
                try Self.validate(suite: suite, key: key)
                switch change {
                case .set(let value):
                    guard value.isStorable else { throw .invalidEntry("numbers and dates must be finite") }
                    guard ValueCodec.encode(value).count <= Self.maxValueBytes else { throw .invalidEntry("the value of \(key) is over \(Self.maxValueBytes) bytes") }
                    _ = try stampAndWrite(suite: suite, key: key, value: value)
                    changed = true
                case .delete:
                    guard let current = try entry(suite: suite, key: key), !current.isDeleted else { continue }
                    _ = try stampAndWrite(suite: suite, key: key, value: nil)
                    changed = true
                }
            }
            return (changed, decision.result)
        }
        if changed { didCommit?() }
        return result
    }

    /// `update` for planners that only store values.
    public func update<T>(suite: String, writing decide: ([Entry]) throws(StoreError) -> (writes: [String: Value], result: T)) throws(StoreError) -> T {
        try update(suite: suite) { entries throws(StoreError) -> (changes: [String: SuiteChange], result: T) in
            let decision = try decide(entries)
            return (decision.writes.mapValues { SuiteChange.set($0) }, decision.result)
        }
    }
}
