/// A `ReplicaStore` in memory, for tests and the deterministic simulator.
///
/// It follows the SQLite store's rules where replication can observe them: last-writer-wins per key,
/// tombstones kept, one increasing sequence per stored change (a key rewritten leaves its old position
/// empty), the hybrid clock ticked by local writes and advanced by applied remote entries, and remote
/// entries too far ahead of the physical clock refused rather than clamped. Nothing can fail, so the
/// failure type is `Never`. Physical time is passed in, never read.
///
/// **Durability.** Like the SQLite store with `synchronous=FULL`, every call that changes the store (`set`,
/// `delete`, `apply` with its watermark, `setWatermark`) is one transaction, durable when it returns:
/// `durableState` is then everything a crash keeps, and `init(restoring:)` is the restart. What a crash
/// loses is what the daemon holds only in memory — sessions, frames in flight, timers, dial backoff — never
/// a returned call.
/// `didCommit` runs after each such transaction (as `Store.didCommit` does), so the simulator can crash a
/// replica between two transactions of one event.
public final class MemoryReplicaStore: ReplicaStore {
    public typealias Failure = Never

    public let device: DeviceID
    public let storeID: String
    public private(set) var clock: HybridClock

    fileprivate struct Key: Hashable, Sendable {
        var suite: String
        var key: String
    }

    private var rows: [Key: Change] = [:]
    /// `history[s - 1]` is the key whose current row has sequence `s`, or `nil` once the key moved on.
    private var history: [Key?] = []
    private var watermarks: [DeviceID: Watermark] = [:]
    private var sendHorizons: [DeviceID: Int64] = [:]
    private var caughtUp: Set<DeviceID> = []
    /// Called after each committed transaction.
    public var didCommit: (() -> Void)?

    public init(device: DeviceID, storeID: String, maxForwardDriftMillis: Int64 = HybridClock.defaultMaxForwardDriftMillis) {
        self.device = device
        self.storeID = storeID
        self.clock = HybridClock(maxForwardDriftMillis: maxForwardDriftMillis)
    }

    /// Everything that survives a crash: the rows, the history, the watermarks and the clock. A value, so a
    /// copy taken now is unaffected by later writes.
    public struct DurableState: Sendable {
        public let device: DeviceID
        public let storeID: String
        fileprivate let clock: HybridClock
        fileprivate let rows: [Key: Change]
        fileprivate let history: [Key?]
        fileprivate let watermarks: [DeviceID: Watermark]
        fileprivate let sendHorizons: [DeviceID: Int64]
        fileprivate let caughtUp: Set<DeviceID>

        /// This state with the send horizons of a later one: only for the simulator's self-test of the checker.
        func keepingSendHorizons(of later: DurableState) -> DurableState {
            DurableState(device: device, storeID: storeID, clock: clock, rows: rows, history: history, watermarks: watermarks,
                         sendHorizons: later.sendHorizons, caughtUp: caughtUp)
        }
    }

    public var durableState: DurableState {
        DurableState(device: device, storeID: storeID, clock: clock, rows: rows, history: history, watermarks: watermarks,
                     sendHorizons: sendHorizons, caughtUp: caughtUp)
    }

    /// The store as a restart after a crash finds it.
    public init(restoring state: DurableState) {
        device = state.device
        storeID = state.storeID
        clock = state.clock
        rows = state.rows
        history = state.history
        watermarks = state.watermarks
        sendHorizons = state.sendHorizons
        caughtUp = state.caughtUp
    }

    // MARK: Local writes and reads

    @discardableResult
    public func set(_ value: Value, suite: String, key: String, physicalMillis: Int64) -> Change {
        let change = write(Entry(suite: suite, key: key, value: value, version: Version(hlc: clock.tick(physicalMillis: physicalMillis), origin: device)))
        didCommit?()
        return change
    }

    /// Writes a tombstone; `nil` (and nothing written) when there is no live value, as in the SQLite store.
    @discardableResult
    public func delete(suite: String, key: String, physicalMillis: Int64) -> Change? {
        guard let current = entry(suite: suite, key: key), !current.isDeleted else { return nil }
        let change = write(Entry(suite: suite, key: key, value: nil, version: Version(hlc: clock.tick(physicalMillis: physicalMillis), origin: device)))
        didCommit?()
        return change
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

    public func apply(_ entries: [Entry], physicalMillis: Int64, savingWatermark watermark: PeerWatermark? = nil) -> ApplyResult {
        let result = ApplyResult.merging(entries, clock: &clock, physicalMillis: physicalMillis, device: device,
                                         current: { entry(suite: $0.suite, key: $0.key) }, write: write)
        if let watermark, result.refused.isEmpty { watermarks[watermark.peer] = watermark.watermark }
        didCommit?()
        return result
    }

    public func watermark(peer: DeviceID) -> Watermark? { watermarks[peer] }

    public func sendHorizon(peer: DeviceID) -> Int64? { sendHorizons[peer] }

    public func setSendHorizon(_ sequence: Int64, peer: DeviceID) { sendHorizons[peer] = sequence }

    public func hasCaughtUp(peer: DeviceID) -> Bool { caughtUp.contains(peer) }

    public func recordCaughtUp(peer: DeviceID) { caughtUp.insert(peer) }

    public func setWatermark(_ watermark: Watermark, peer: DeviceID) {
        watermarks[peer] = watermark
        didCommit?()
    }

    private func write(_ entry: Entry) -> Change {
        let key = Key(suite: entry.suite, key: entry.key)
        if let old = rows[key] { history[Int(old.sequence) - 1] = nil }
        history.append(key)
        let change = Change(sequence: Int64(history.count), entry: entry)
        rows[key] = change
        return change
    }
}
