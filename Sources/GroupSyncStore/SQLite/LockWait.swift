import Dispatch

/// Says when a write has waited a while for another process's lock on the store, and who holds it.
///
/// A write waits for as long as it takes (a local write always succeeds), but a wait that drags on is
/// someone else's doing: a program that opened the store and began a transaction, a process stopped in the
/// middle of one. Silent, `groupsync set` looked hung, for up to SQLite's two-minute timeout at a time
/// (found by review). The command line prints the notice on stderr, the daemon logs it.
public enum LockWait {
    /// Given one line (without a newline) once a write has waited `noticeAfterMillis`. Set once, before any
    /// store is opened (the CLI's start, the daemon's); nil says nothing.
    nonisolated(unsafe) public static var notice: (@Sendable (String) -> Void)?

    static let noticeAfterMillis = 1000

    /// Calls `notice` if `body` (a wait that blocks in the kernel, so it cannot look at the clock itself)
    /// has not returned within `noticeAfterMillis`, describing who holds a lock on `lockedFile`.
    static func noticing<T>(holdersOf lockedFile: String, kind: LockHolders.Kind, _ body: () -> T) -> T {
        guard let notice else { return body() }
        let item = DispatchWorkItem { notice(message(holdersOf: lockedFile, kind: kind)) }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(noticeAfterMillis), execute: item)
        defer { item.cancel() }
        return body()
    }

    /// Calls `notice` now, from a wait that counts its own time (SQLite's busy handler).
    static func tell(holdersOf lockedFile: String, kind: LockHolders.Kind) {
        notice?(message(holdersOf: lockedFile, kind: kind))
    }

    static func message(holdersOf lockedFile: String, kind: LockHolders.Kind) -> String {
        let holders = LockHolders.processes(writeLocking: lockedFile, kind: kind)
        // None found: a holder out of sight (another PID namespace), or another connection of this process.
        let who = holders.isEmpty ? "another writer" : holders.map { "process \($0.pid) (\($0.name))" }.joined(separator: ", ")
        return "waiting for the store's write lock, held by \(who); the write goes in once it is let go"
    }
}
