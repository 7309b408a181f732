import Glibc
import Synchronization

/// Cross-process "something changed" signal: after a commit, a writer writes one byte to the home's
/// `signal/changes` file, which inotify reports as IN_MODIFY to every watcher of that folder. The byte means
/// nothing; the store itself is the message. This keeps watchers event-driven (no polling) and cheap.
///
/// A writer that commits often keeps one `ChangeSignal` and so the file open: opening and closing it for
/// every commit (signalling with IN_CLOSE_WRITE, as this did first) cost ≈20 µs of a group commit's ≈420 µs
/// in the daemon.
public final class ChangeSignal: Sendable {
    private let home: Home
    /// Opened at the first post (or `openNow`); -1 until then, or while the file cannot be opened (a read-only
    /// home, no descriptor left).
    private let descriptor = Mutex<Int32>(-1)
    /// Told why a post reached no watcher. A commit that signals nobody is seen only when a later one signals:
    /// the daemon's other sessions and the machine's `watch`es wait until then.
    private let onFailure: (@Sendable (String) -> Void)?

    public init(home: Home, onFailure: (@Sendable (String) -> Void)? = nil) {
        self.home = home
        self.onFailure = onFailure
    }

    /// Opens the file now rather than at the first post: a long-running writer (the daemon) opens it while
    /// descriptors are to be had. Opened first at a post, it failed once a crowd of clients had taken every
    /// descriptor, and the commits of peers' changes reached neither the other peers nor any `watch` (found
    /// by review).
    public func openNow() {
        descriptor.withLock { fd in
            if fd < 0 { fd = openSignalFile() }
        }
    }

    deinit { descriptor.withLock { if $0 >= 0 { close($0) } } }

    public func post() {
        // Under the lock, write included: the descriptor may be replaced below, and a write through a number
        // another thread has just closed could land in whatever file reused it.
        descriptor.withLock { fd in
            if fd < 0 { fd = openSignalFile() }
            guard fd >= 0 else { return }
            var byte: UInt8 = 1
            if pwrite(fd, &byte, 1, 0) != 1 { report("cannot write \(home.changeSignalPath): \(String(cString: strerror(errno)))") }
            // A file no longer linked (its folder was removed) reaches no watcher: open it anew, and signal again.
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_nlink == 0 else { return }
            close(fd)
            fd = openSignalFile()
            if fd >= 0 { _ = pwrite(fd, &byte, 1, 0) }
        }
    }

    /// Opens (creating it and its folder, private like the home) the file watchers wait on; says why not.
    private func openSignalFile() -> Int32 {
        guard home.createChangeSignalFolder() else {
            report("cannot make \(home.changeSignalFolder): \(String(cString: strerror(errno)))")
            return -1
        }
        let fd = open(home.changeSignalPath, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd < 0 { report("cannot open \(home.changeSignalPath): \(String(cString: strerror(errno)))") }
        return fd
    }

    private func report(_ problem: String) { onFailure?(problem) }
}
