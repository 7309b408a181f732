/// When the daemon derives block lists again (`BlockListReconciler`): once block keys and lists have stopped
/// changing for a moment, not after every commit. A device catching up on many blocks receives them in
/// batches; derived after each batch, its list was partial, written with a fresh clock, and so it beat the
/// whole list on every up-to-date device until they derived theirs again: apps there saw most blocks lifted
/// and put back, several times per catch-up. Waiting for a quiet moment derives it once, from every key.
/// A value with time passed in, tested without a daemon; the daemon's watch loop's timer runs only while suites wait.
public struct BlockListSchedule: Sendable {
    /// How long block keys and lists must stay unchanged before the lists are derived. A catch-up's batches
    /// come milliseconds apart; a link that stalls longer mid-catch-up still gets a partial list derived
    /// (a known limitation: the protocol does not tell a receiver that more is coming).
    public static let quietMillis: Int64 = 1_000
    /// A stream of block changes that never pauses is still derived this often; longer than a catch-up of
    /// a million keys takes here, so that one is derived once, at its end.
    public static let maxWaitMillis: Int64 = 30_000

    public init() {}

    public private(set) var suites: Set<String> = []
    private var firstChangeAt: Int64?
    /// When to derive, on the monotonic clock; nil when no suite waits (no timer).
    public private(set) var dueAt: Int64?

    /// Block keys or lists of `changed` suites changed at `nowMillis`.
    public mutating func changed(_ changed: Set<String>, nowMillis: Int64) {
        guard !changed.isEmpty else { return }
        suites.formUnion(changed)
        let first = firstChangeAt ?? nowMillis
        firstChangeAt = first
        dueAt = min(nowMillis + Self.quietMillis, first + Self.maxWaitMillis)
    }

    /// The suites to derive now, if their time has come; they no longer wait.
    public mutating func takeDue(nowMillis: Int64) -> Set<String> {
        guard let dueAt, nowMillis >= dueAt else { return [] }
        defer { self = BlockListSchedule() }
        return suites
    }
}
