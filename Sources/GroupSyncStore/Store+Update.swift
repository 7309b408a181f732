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
        try update(suite: suite, reading: { () throws(StoreError) in try liveEntries(suite: suite) }, decide)
    }

    /// `update` for a planner that reads only some keys of a suite: `keys`, and those starting with `keyPrefix`
    /// (`liveEntries(suite:keyPrefix:)`), so that its cost does not grow with the suite.
    public func update<T>(suite: String, keys: [String], keyPrefix: String,
                          writing decide: ([Entry]) throws(StoreError) -> (writes: [String: Value], result: T)) throws(StoreError) -> T {
        let read = { () throws(StoreError) -> [Entry] in
            var entries = try self.liveEntries(suite: suite, keyPrefix: keyPrefix)
            for key in keys { if let entry = try self.entry(suite: suite, key: key), !entry.isDeleted { entries.append(entry) } }
            return entries
        }
        return try update(suite: suite, reading: read) { entries throws(StoreError) -> (changes: [String: SuiteChange], result: T) in
            let decision = try decide(entries)
            return (decision.writes.mapValues { SuiteChange.set($0) }, decision.result)
        }
    }

    /// The transaction both `update`s run: `read` what the planner sees, `decide`, write, signal.
    private func update<T>(suite: String, reading read: () throws(StoreError) -> [Entry],
                           _ decide: ([Entry]) throws(StoreError) -> (changes: [String: SuiteChange], result: T)) throws(StoreError) -> T {
        let (changed, result) = try database.transaction(immediate: true) { () throws(StoreError) -> (Bool, T) in
            let decision = try decide(try read())
            let writes = decision.changes.sorted(by: { $0.key < $1.key }).map { key, change -> LocalWrite in
                switch change {
                case .set(let value): .set(suite: suite, key: key, value: value)
                case .delete: .delete(suite: suite, key: key)
                }
            }
            for write in writes { try Self.validate(write) }
            let changed = try writeInTransaction(writes).contains { $0 != nil }
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
