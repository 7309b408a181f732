/// Decides which `sent` and `applied` lines a session writes. A line per batch made a steady stream of
/// writes a line per write on each side: an app that writes a key a second filled the journal with
/// 170,000 lines a day per peer. So the first batch of each kind in a session is logged (where a catch-up
/// starts), and after it at most one per interval; a logged line counts the batches it stood for since the
/// previous one, and the session's end counts those left unlogged. Pure, on the session's monotonic clock.
struct RoutineBatchLog: Sendable {
    enum Kind: String, Sendable, CaseIterable {
        case sent, applied
    }

    /// Batches not logged since the last line of their kind.
    struct Unlogged: Sendable, Equatable {
        var batches = 0
        var entries = 0
    }

    let intervalMillis: Int64
    private var lastLogged: [Kind: Int64] = [:]
    private var unlogged: [Kind: Unlogged] = [:]

    init(intervalMillis: Int64) {
        self.intervalMillis = intervalMillis
    }

    /// A batch of `entries` of `kind` at `monotonicMillis`: `nil` when it goes unlogged (and is counted),
    /// otherwise what went unlogged before it, for its line to say.
    mutating func admit(_ kind: Kind, entries: Int, atMonotonic monotonicMillis: Int64) -> Unlogged? {
        if let last = lastLogged[kind], monotonicMillis - last < intervalMillis {
            unlogged[kind, default: Unlogged()].batches += 1
            unlogged[kind, default: Unlogged()].entries += entries
            return nil
        }
        lastLogged[kind] = monotonicMillis
        return unlogged.removeValue(forKey: kind) ?? Unlogged()
    }

    /// What went unlogged since each kind's last line, for the session's last words; empty when nothing did.
    mutating func drain() -> [(kind: Kind, unlogged: Unlogged)] {
        defer { unlogged = [:] }
        return Kind.allCases.compactMap { kind in unlogged[kind].map { (kind, $0) } }
    }

    /// `unlogged_batches=… unlogged_entries=…`, or nothing when none went unlogged.
    static func details(_ unlogged: Unlogged, prefix: String = "unlogged") -> String {
        unlogged.batches == 0 ? "" : " \(prefix)_batches=\(unlogged.batches) \(prefix)_entries=\(unlogged.entries)"
    }
}
