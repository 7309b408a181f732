import Glibc

/// An exclusive `flock` on a file beside the store, taken around every write transaction by every
/// connection of every process.
///
/// SQLite alone makes a writer that finds the write lock taken poll for it (`BusyWait`): napping too long
/// leaves the lock idle while writers sleep, napping briefly makes eight waiting writers steal the CPU from
/// the one that holds it. A writer blocked in `flock` instead sleeps in the kernel and is woken when the lock
/// is released, and a process killed while holding it releases it with its descriptors. If the file cannot
/// be opened (a read-only home), writers fall back to SQLite's lock alone, which is still correct.
final class WriterLock {
    private let fd: Int32
    private let path: String

    init(path: String) {
        self.path = path
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
    }

    deinit { if fd >= 0 { close(fd) } }

    func acquire() {
        guard fd >= 0 else { return }
        // Uncontended, one call; contended, a wait that tells who it waits for if it drags on (`LockWait`).
        if flock(fd, LOCK_EX | LOCK_NB) == 0 { return }
        LockWait.noticing(holdersOf: path, kind: .flock) {
            while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
        }
    }

    func release() {
        guard fd >= 0 else { return }
        flock(fd, LOCK_UN)
    }
}
