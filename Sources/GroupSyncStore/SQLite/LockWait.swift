import Dispatch
import Synchronization

/// Says when a write has waited a while for another process's lock on the store, and who holds it.
///
/// A write waits for as long as it takes (a local write always succeeds), but a wait that drags on is
/// someone else's doing: a program that opened the store and began a transaction, a process stopped in the
/// middle of one. Silent, `groupsync set` looked hung, for up to SQLite's two-minute timeout at a time
/// (found by review). The command line prints the notice on stderr, the daemon logs it.
///
/// Only a holder seen holding at `noticeAfterMillis` and still at twice that is named: a queue of writers,
/// each holding the lock a moment (300 parallel `set`s), also makes the last ones wait past a second, and
/// that is no one's fault. A holder that cannot be seen (another PID namespace, or this process's own other
/// connection) is not named, so nothing is said of it.
public enum LockWait {
    /// Given one line (without a newline) when a write waits on a holder. Set once, before any store is
    /// opened (the CLI's start, the daemon's); nil says nothing.
    nonisolated(unsafe) public static var notice: (@Sendable (String) -> Void)?

    static let noticeAfterMillis = 1000

    /// Runs `body` (a wait that blocks in the kernel, so it cannot look at the clock itself) and calls `notice`
    /// if a holder of a lock on `lockedFile` holds it through both looks.
    static func noticing<T>(holdersOf lockedFile: String, kind: LockHolders.Kind, _ body: () -> T) -> T {
        guard notice != nil else { return body() }
        let waiting = Waiting()
        let after = DispatchTime.now() + .milliseconds(noticeAfterMillis)
        DispatchQueue.global().asyncAfter(deadline: after) {
            guard waiting.goesOn else { return }
            let seen = LockHolders.processes(writeLocking: lockedFile, kind: kind)
            guard !seen.isEmpty else { return }
            DispatchQueue.global().asyncAfter(deadline: after + .milliseconds(noticeAfterMillis)) {
                guard waiting.goesOn else { return }
                tell(stillHolding: seen, lockedFile, kind: kind)
            }
        }
        defer { waiting.end() }
        return body()
    }

    /// The second look: calls `notice` naming those of `seen` still holding a write lock on `lockedFile`.
    static func tell(stillHolding seen: [LockHolders.Holder], _ lockedFile: String, kind: LockHolders.Kind) {
        let still = LockHolders.processes(writeLocking: lockedFile, kind: kind).filter(seen.contains)
        guard let notice, !still.isEmpty else { return }
        notice("waiting for the store's write lock, held by \(still.map { "process \($0.pid) (\($0.name))" }.joined(separator: ", ")); the write goes in once it is let go")
    }

    /// Whether the wait a notice is scheduled for still goes on.
    private final class Waiting: Sendable {
        private let ended = Mutex(false)
        var goesOn: Bool { !ended.withLock { $0 } }
        func end() { ended.withLock { $0 = true } }
    }
}
