extension ApplyResult {
    /// How every `ReplicaStore` merges a batch of remote entries, so the in-memory store and the SQLite store
    /// cannot drift apart: an entry no store may keep is left out (`ApplyResult.unstorable`), then each entry's
    /// clock is checked against the drift bound (a refused entry is neither stored nor folded into the
    /// clock), then it is stored if it wins by last-writer-wins.
    ///
    /// `current` reads the stored entry for the same key; `write` stores a winner and returns its change.
    /// The caller wraps the whole call in one transaction and persists `clock` afterwards.
    public static func merging<Failure: Error>(
        _ entries: [Entry], clock: inout HybridClock, physicalMillis: Int64, device: DeviceID,
        current: (Entry) throws(Failure) -> Entry?, write: (Entry) throws(Failure) -> Change
    ) throws(Failure) -> ApplyResult {
        try merging(entries, clock: &clock, physicalMillis: physicalMillis, device: device, stored: current) { (entry) throws(Failure) -> Change? in
            LastWriterWins.wins(entry, over: try current(entry)) ? try write(entry) : nil
        }
    }

    /// The same merge for a store that decides last-writer-wins and writes in one step (the SQLite store
    /// does both in one SQL statement per entry, without reading the stored entry back into Swift).
    /// `writeIfWins` must store the entry exactly when `LastWriterWins.wins(entry, over: stored)` holds,
    /// returning its change, and otherwise change nothing and return `nil`.
    ///
    /// `stored` reads the stored entry of a firing record (`LatestFiring`) before it may be replaced; a later
    /// time it held is written back as `device`'s own write, on a version ticked here (`kept`). A store that
    /// makes a batch visible before it is durable must make it durable first when such a version runs ahead
    /// of its clock (`Store.apply`), as it does for a local write.
    public static func merging<Failure: Error>(
        _ entries: [Entry], clock: inout HybridClock, physicalMillis: Int64, device: DeviceID,
        stored: (Entry) throws(Failure) -> Entry?,
        writeIfWins: (Entry) throws(Failure) -> Change?
    ) throws(Failure) -> ApplyResult {
        var result = ApplyResult()
        result.applied.reserveCapacity(entries.count)
        for entry in entries {
            if let problem = entry.storageProblem {
                result.unstorable.append((entry, problem))
                continue
            }
            do throws(ClockError) {
                try clock.observe(entry.version.hlc, physicalMillis: physicalMillis)
            } catch {
                result.refused.append((entry, error))
                continue
            }
            let replaced = LatestFiring.isRecord(entry) ? try stored(entry) : nil
            if let change = try writeIfWins(entry) {
                result.applied.append(change)
                if let later = LatestFiring.restored(replaced, replacedBy: entry) {
                    let hlc = clock.tick(physicalMillis: physicalMillis)
                    if let kept = try writeIfWins(Entry(suite: entry.suite, key: entry.key, value: later, version: Version(hlc: hlc, origin: device))) {
                        result.kept.append(kept)
                    }
                }
            } else {
                result.superseded += 1
            }
        }
        return result
    }
}
