import Glibc
import GroupSyncStore

/// One daemon per home: two would both dial the same peers and race on the same watermarks.
public enum DaemonLock {
    static func acquire(home: Home) throws(DaemonError) {
        let fd = open(home.path + "/daemon.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io("cannot open \(home.path)/daemon.lock: \(String(cString: strerror(errno)))") }
        // Held (and the descriptor kept open) for the life of the process; the kernel releases it on exit,
        // even after kill -9. A command asking whether a daemon runs holds a shared lock for an instant
        // (`isHeld`): a daemon starting just then tries again for up to a second (a machine under load may
        // hold the prober back mid-probe) before it takes the lock for another daemon's.
        for attempt in 0... {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return }
            guard errno == EWOULDBLOCK || errno == EINTR, attempt < 100 else { break }
            usleep(10_000)
        }
        close(fd)
        throw .alreadyRunning(home.path)
    }

    /// Whether a daemon, of this groupsync or an earlier one (they take the same lock), runs on `home` now.
    public static func isHeld(home: Home) -> Bool {
        let fd = open(home.path + "/daemon.lock", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }   // no daemon ever ran here
        defer { close(fd) }
        // Shared: two commands asking at once must not each take the other's probe for a daemon (found by
        // review: one `status` in 450 run in parallel said a daemon ran when none did). The daemon's exclusive
        // lock still refuses it.
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }
}
