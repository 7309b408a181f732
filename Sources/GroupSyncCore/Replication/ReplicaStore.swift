/// One change in a store's local history: its position (`sequence`, increasing, local to that store)
/// and the entry as it now stands. Watchers and replication read the history by sequence, so catching up
/// costs what changed, not the size of the store.
public struct Change: Hashable, Sendable {
    public var sequence: Int64
    public var entry: Entry

    public init(sequence: Int64, entry: Entry) {
        self.sequence = sequence
        self.entry = entry
    }
}

/// How far a replica has read a peer's history: the peer's store ID (its epoch) and the last sequence
/// applied. A watermark for a different store ID is void: the peer's store was recreated, read it afresh.
public struct Watermark: Hashable, Sendable {
    public var storeID: String
    public var sequence: Int64

    public init(storeID: String, sequence: Int64) {
        self.storeID = storeID
        self.sequence = sequence
    }
}

/// A watermark and the peer whose history it measures: saved with the entries that move it, so a batch
/// costs one transaction, not two.
public struct PeerWatermark: Hashable, Sendable {
    public var watermark: Watermark
    public var peer: DeviceID

    public init(_ watermark: Watermark, peer: DeviceID) {
        self.watermark = watermark
        self.peer = peer
    }
}

/// What merging a batch of remote entries did.
public struct ApplyResult: Sendable {
    /// Entries that won and are now stored, with their new local sequence.
    public var applied: [Change] = []
    /// Entries that lost to what the store already holds (including exact duplicates).
    public var superseded = 0
    /// Entries refused because their clock is too far ahead; the sender offers them again later.
    public var refused: [(entry: Entry, reason: ClockError)] = []
    /// Entries no store may keep (`Entry.storageProblem`), left out for good: unlike a refused entry, no
    /// later offer could make one storable, so they do not hold the watermark back.
    public var unstorable: [(entry: Entry, problem: String)] = []
    /// Writes of this store's own that the merge made: a later firing time written back over a peer's
    /// earlier one (`LatestFiring`). Not echoes: the peer lacks them.
    public var kept: [Change] = []

    /// Every change the merge stored: the peer's entries that won, then the merge's own writes.
    public var stored: [Change] { applied + kept }

    public init() {}
}

/// What replication needs from a store. The SQLite store implements it for the daemon; an in-memory
/// store implements it for the deterministic simulator. Keeping this surface small is what lets the
/// same replication state machine run in both.
public protocol ReplicaStore: AnyObject {
    associatedtype Failure: Error
    var storeID: String { get }
    func changes(after sequence: Int64, limit: Int) throws(Failure) -> [Change]
    func lastSequence() throws(Failure) -> Int64
    /// Merges remote entries durably (all or none) by last-writer-wins, judging clock drift at `physicalMillis`,
    /// leaving out the entries no store may keep (`ApplyResult.unstorable`),
    /// and stores `watermark` in the same transaction — unless an entry was refused, when the caller works
    /// out how far it got and stores that itself. Also called with no entries, to store the watermark alone.
    func apply(_ entries: [Entry], physicalMillis: Int64, savingWatermark watermark: PeerWatermark?) throws(Failure) -> ApplyResult
    func watermark(peer: DeviceID) throws(Failure) -> Watermark?
    func setWatermark(_ watermark: Watermark, peer: DeviceID) throws(Failure)
    /// The highest sequence of our history this store may ever have sent to `peer` (`nil`: none recorded).
    /// It lives in the store, so a store restored from a backup (or a VM snapshot) carries the old, lower
    /// value: a peer that claims to have read further than that has read a history this store no longer has.
    func sendHorizon(peer: DeviceID) throws(Failure) -> Int64?
    func setSendHorizon(_ sequence: Int64, peer: DeviceID) throws(Failure)
    /// Whether this store has read `peer`'s history, up to the head the peer announced, at least once: only
    /// then does it hold what the peer knew, such as who founded the balance (`BalanceBook.register`). A
    /// watermark alone says only that some of it arrived. Local bookkeeping: a record lost to a power cut
    /// only waits for the next catch-up.
    func hasCaughtUp(peer: DeviceID) throws(Failure) -> Bool
    func recordCaughtUp(peer: DeviceID) throws(Failure)
}
