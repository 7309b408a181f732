import Glibc
import GroupSyncStore

/// An advisory lock on a file in the home, held while a body runs: commands of one device that must not
/// overlap take turns on it (two `init`s on a fresh home; balance commands that ask peers for rights). A
/// process killed while holding it lets go with its descriptors.
enum HomeLock {
    /// The longest a command waits while one holder keeps the lock. Its holders hold it for seconds at most (a
    /// balance command waits up to 2 s for peers, an `init` makes a key and a store); a holder that is stopped
    /// (SIGSTOP, Ctrl-Z) held every later `spend` and `usage record` for good (found by review). The wait
    /// starts again whenever the lock changes hands: counted from the first try, a burst of 60 `usage record`s
    /// (iOS's phantom bursts), each a fraction of a second, failed 19 of them after a year of balance records,
    /// each blaming a holder that was merely next in the queue (found by a review of a simulated year).
    static let maxWaitMillis: Int64 = 15_000
    /// How often a waiting command looks at who holds the lock (`/proc/locks`).
    private static let holderCheckMillis: Int64 = 500

    static func exclusively<T>(_ path: String, _ body: () throws(CLIError) -> T) throws(CLIError) -> T {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .failure("cannot lock \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }  // which also lets go of the lock
        switch take(fd, LOCK_EX, path: path) {
        case .taken: return try body()
        case .failed(let code): throw .failure("cannot lock \(path): \(String(cString: strerror(code)))")
        case .heldTooLong:
            let holders = LockHolders.processes(writeLocking: path, kind: .flock).map { "\($0.name) (pid \($0.pid))" }
            throw .failure("another command of this device" + (holders.isEmpty ? "" : ", " + holders.joined(separator: ", ") + ",")
                           + " has held \(path) for \(maxWaitMillis / 1000) s: it may be stopped (SIGSTOP, Ctrl-Z); resume or end it, then try again")
        }
    }

    /// Waits until no process holds the lock at `path` exclusively, without making the file: a command that
    /// finds the home unfinished waits for an `init` that may be finishing it. No lock file, no wait. At most
    /// `maxWaitMillis`, as for `exclusively`: a stopped `init` held the command for good; after it, the
    /// command finds the home as that `init` left it, and says so.
    static func awaitRelease(_ path: String) {
        // Non-blocking: a FIFO put in its place (which the home's checks refuse later) must not hang the open.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return }
        _ = take(fd, LOCK_SH, path: path)
        close(fd)
    }

    private enum Taking { case taken, heldTooLong, failed(Int32) }

    /// Takes the lock on `fd` (the file at `path`): tried without blocking, and again every 20 ms while another
    /// process holds it (only while waiting), until one holder has kept it for `maxWaitMillis`. Where
    /// `/proc/locks` names no holder, the wait is counted from the first try.
    private static func take(_ fd: Int32, _ operation: Int32, path: String) -> Taking {
        var waitedMillis: Int64 = 0
        var holders: [Int32]?
        while flock(fd, operation | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else { return .failed(errno) }
            // No holder named (the lock let go between two looks, or `/proc/locks` unreadable) says nothing of
            // a change of hands: only the last holders named are compared.
            if waitedMillis % holderCheckMillis == 0 {
                let now = LockHolders.processes(writeLocking: path, kind: .flock).map(\.pid).sorted()
                if !now.isEmpty {
                    if let before = holders, before != now { waitedMillis = 0 }
                    holders = now
                }
            }
            guard waitedMillis < maxWaitMillis else { return .heldTooLong }
            usleep(20_000)
            waitedMillis += 20
        }
        return .taken
    }
}
