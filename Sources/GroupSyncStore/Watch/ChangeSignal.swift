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
    /// Opened at the first post; -1 until then, or while the file cannot be opened (a read-only home).
    private let descriptor = Mutex<Int32>(-1)

    public init(home: Home) {
        self.home = home
    }

    deinit { descriptor.withLock { if $0 >= 0 { close($0) } } }

    public func post() {
        // Under the lock, write included: the descriptor may be replaced below, and a write through a number
        // another thread has just closed could land in whatever file reused it.
        descriptor.withLock { fd in
            if fd < 0 { fd = Self.openSignalFile(home) }
            guard fd >= 0 else { return }
            var byte: UInt8 = 1
            _ = pwrite(fd, &byte, 1, 0)
            // A file no longer linked (its folder was removed) reaches no watcher: open it anew, and signal again.
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_nlink == 0 else { return }
            close(fd)
            fd = Self.openSignalFile(home)
            if fd >= 0 { _ = pwrite(fd, &byte, 1, 0) }
        }
    }

    /// Opens (creating it and its folder, private like the home) the file watchers wait on.
    private static func openSignalFile(_ home: Home) -> Int32 {
        guard home.createChangeSignalFolder() else { return -1 }
        return open(home.changeSignalPath, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
    }
}
