/// A `ReplicaStore` in memory, for tests and the deterministic simulator.
///
/// It follows the SQLite store's rules where replication can observe them: last-writer-wins per key,
/// tombstones kept, one increasing sequence per stored change (a key rewritten leaves its old position
/// empty), the hybrid clock ticked by local writes and advanced by applied remote entries, and remote
/// entries too far ahead of the physical clock refused rather than clamped. Nothing can fail, so the
/// failure type is `Never`. Physical time is passed in, never read.
public final class MemoryReplicaStore: ReplicaStore {
    public typealias Failure = Never

    public let device: DeviceID
    public let storeID: String
    public private(set) var clock: HybridClock

    private struct Key: Hashable {
        var suite: String
        var key: String
    }

    private var rows: [Key: Change] = [:]
    /// `history[s - 1]` is the key whose current row has sequence `s`, or `nil` once the key moved on.
    private var history: [Key?] = []
    private var watermarks: [DeviceID: Watermark] = [:]

    public init(device: DeviceID, storeID: String, maxForwardDriftMillis: Int64 = HybridClock.defaultMaxForwardDriftMillis) {
        self.device = device
        self.storeID = storeID
        self.clock = HybridClock(maxForwardDriftMillis: maxForwardDriftMillis)
    }

    // MARK: Local writes and reads

    @discardableResult
    public func set(_ value: Value, suite: String, key: String, physicalMillis: Int64) -> Change {
        write(Entry(suite: suite, key: key, value: value, version: Version(hlc: clock.tick(physicalMillis: physicalMillis), origin: device)))
    }

    /// Writes a tombstone; `nil` (and nothing written) when there is no live value, as in the SQLite store.
    @discardableResult
    public func delete(suite: String, key: String, physicalMillis: Int64) -> Change? {
        guard let current = entry(suite: suite, key: key), !current.isDeleted else { return nil }
        return write(Entry(suite: suite, key: key, value: nil, version: Version(hlc: clock.tick(physicalMillis: physicalMillis), origin: device)))
    }

    public func entry(suite: String, key: String) -> Entry? { rows[Key(suite: suite, key: key)]?.entry }

    /// Every entry, tombstones included, in a stable order: what two converged replicas must agree on.
    public var entries: [Entry] {
        rows.values.map(\.entry).sorted { ($0.suite, $0.key) < ($1.suite, $1.key) }
    }

    // MARK: ReplicaStore

    public func changes(after sequence: Int64, limit: Int) -> [Change] {
        var result: [Change] = []
        var index = Int(max(sequence, 0))
        while index < history.count && result.count < limit {
            if let key = history[index] { result.append(rows[key]!) }
            index += 1
        }
        return result
    }

    public func lastSequence() -> Int64 { Int64(history.count) }

    public func apply(_ entries: [Entry], physicalMillis: Int64) -> ApplyResult {
        ApplyResult.merging(entries, clock: &clock, physicalMillis: physicalMillis,
                            current: { entry(suite: $0.suite, key: $0.key) }, write: write)
    }

    public func watermark(peer: DeviceID) -> Watermark? { watermarks[peer] }

    public func setWatermark(_ watermark: Watermark, peer: DeviceID) { watermarks[peer] = watermark }

    private func write(_ entry: Entry) -> Change {
        let key = Key(suite: entry.suite, key: entry.key)
        if let old = rows[key] { history[Int(old.sequence) - 1] = nil }
        history.append(key)
        let change = Change(sequence: Int64(history.count), entry: entry)
        rows[key] = change
        return change
    }
}
