import Glibc
import GroupSyncStore

/// One daemon per home: two would both dial the same peers and race on the same watermarks.
public enum DaemonLock {
    static func acquire(home: Home) throws(DaemonError) {
        let fd = open(home.path + "/daemon.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io("cannot open \(home.path)/daemon.lock: \(String(cString: strerror(errno)))") }
        // Held (and the descriptor kept open) for the life of the process; the kernel releases it on exit,
        // even after kill -9.
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw .alreadyRunning(home.path)
        }
    }

    /// Whether a daemon, of this groupsync or an earlier one (they take the same lock), runs on `home` now.
    public static func isHeld(home: Home) -> Bool {
        let fd = open(home.path + "/daemon.lock", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }   // no daemon ever ran here
        defer { close(fd) }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }
}
