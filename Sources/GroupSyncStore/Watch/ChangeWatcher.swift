import Glibc

/// Waits for `ChangeSignal`s in a home with inotify: blocked in `poll`, it costs no CPU until a writer
/// in any process commits. Watching the signal's folder (not the file) survives the file being recreated.
/// `wait` belongs to one thread; `wake` may be called from any (it only writes to a pipe).
public final class ChangeWatcher: @unchecked Sendable {
    private let inotifyFD: Int32
    private let home: Home
    /// A self-pipe other threads can poke to wake a blocked `wait` (used by the daemon to shut down).
    private let wakeFD: Int32
    private let wakeWriteFD: Int32

    public init(home: Home) throws(HomeError) {
        self.home = home
        inotifyFD = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard inotifyFD >= 0 else {
            // EMFILE here is most often the per-user count of inotify instances, which `ulimit -n` does not raise.
            let hint = errno == EMFILE ? " (or the user's inotify instances are all in use: see fs.inotify.max_user_instances)" : ""
            throw .cannotRead(path: home.path, reason: "inotify: \(String(cString: strerror(errno)))\(hint)")
        }
        let folder = home.changeSignalFolder
        guard Self.watch(home, with: inotifyFD) else {
            let reason = String(cString: strerror(errno))
            close(inotifyFD)
            throw .cannotRead(path: folder, reason: "inotify watch: \(reason)")
        }
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else {
            close(inotifyFD)
            throw .cannotRead(path: home.path, reason: "pipe: \(String(cString: strerror(errno)))")
        }
        for fd in pipeFDs {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        wakeFD = pipeFDs[0]
        wakeWriteFD = pipeFDs[1]
    }

    deinit {
        close(inotifyFD)
        close(wakeFD)
        close(wakeWriteFD)
    }

    /// IN_MODIFY is the signal; the others catch the file being created or replaced by a writer, and the
    /// folder itself going away.
    private static let mask = UInt32(IN_MODIFY) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO) | UInt32(IN_CREATE)
        | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF)

    /// Creates the signal folder if missing and watches it, and watches the home for the folder going and
    /// coming back and for the store file going: the folder's own IN_DELETE_SELF comes only once nothing
    /// holds it, and a writer that keeps the signal file open (the daemon) holds it until its next signal.
    private static func watch(_ home: Home, with inotifyFD: Int32) -> Bool {
        // The folder first: made after the home's watch, its creation would read as a change.
        guard home.createChangeSignalFolder() else { return false }
        let homeEvents = UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM) | UInt32(IN_CREATE) | UInt32(IN_MOVED_TO) | UInt32(IN_ONLYDIR)
        _ = inotify_add_watch(inotifyFD, home.path, homeEvents)
        return watchSignalFolder(home, with: inotifyFD)
    }

    /// Watches the signal folder now in the home, if there is one (false if not); the same folder twice is one watch.
    @discardableResult
    private static func watchSignalFolder(_ home: Home, with inotifyFD: Int32) -> Bool {
        inotify_add_watch(inotifyFD, home.changeSignalFolder, mask) >= 0
    }

    public enum Wake { case changed, woken, timedOut, outputClosed }

    /// Blocks until a change is signalled, `wake()` is called, or `timeoutMillis` passes (-1: forever).
    /// `output`: also returns `.outputClosed` once that descriptor reports an error or hang-up (the reader of
    /// a pipe went away), so a `watch` whose reader left stops then, not at the next change of its suite.
    public func wait(timeoutMillis: Int32 = -1, output: Int32? = nil) -> Wake {
        var fds = [pollfd(fd: inotifyFD, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        // Asking for no event still reports POLLERR and POLLHUP, and nothing at all for a terminal or a file.
        if let output { fds.append(pollfd(fd: output, events: 0, revents: 0)) }
        while true {
            let rc = poll(&fds, nfds_t(fds.count), timeoutMillis)
            if rc < 0 && errno == EINTR { continue }
            if rc <= 0 { return .timedOut }
            if fds.count > 2, fds[2].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { return .outputClosed }
            if fds[1].revents != 0 {
                var drained = [UInt8](repeating: 0, count: 64)
                let count = read(wakeFD, &drained, drained.count)
                if drained.prefix(max(0, count)).contains(Self.stopByte) { return .woken }
                _ = drainSignalledChange()
                return .changed
            }
            if drainSignalledChange() { return .changed }
            fds[0].revents = 0
        }
    }

    /// Wakes a thread blocked in `wait`, which returns `.woken`; safe from any thread.
    public func wake() { poke(Self.stopByte) }

    /// Makes a thread blocked in `wait` return `.changed`, as if a change had been signalled, without waking
    /// any other watcher on the machine; safe from any thread. The daemon uses it when a peer connects or
    /// leaves, which changes what its balance agent would do although nothing was written.
    public func nudge() { poke(Self.nudgeByte) }

    private static let stopByte: UInt8 = 1, nudgeByte: UInt8 = 2

    private func poke(_ byte: UInt8) {
        var byte = byte
        _ = write(wakeWriteFD, &byte, 1)
    }

    /// Reads all pending inotify events; true if any concerned the change signal file.
    private func drainSignalledChange() -> Bool {
        var changed = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(inotifyFD, $0.baseAddress, $0.count) }
            if n <= 0 { return changed }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= n {
                let (nameLength, name) = buffer.withUnsafeBytes { raw -> (Int, String) in
                    let length = Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    let nameStart = offset + MemoryLayout<inotify_event>.size
                    let nameBytes = raw[nameStart..<min(nameStart + length, n)].prefix { $0 != 0 }
                    return (length, String(decoding: nameBytes, as: UTF8.self))
                }
                let mask = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) }
                if name == Home.changeSignalName { changed = true }
                // The home says the signal folder went (removed or renamed): a change may have been missed. It is
                // not made again here: the next writer makes it (`ChangeSignal`), and its creation below is the
                // signal. Made here, it would come back under a user removing the home (found by review: `rm -rf`
                // failed on it while a watch ran).
                if name == Home.changeSignalFolderName, mask & (UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM)) != 0 { changed = true }
                if name == Home.changeSignalFolderName, mask & (UInt32(IN_CREATE) | UInt32(IN_MOVED_TO)) != 0 {
                    Self.watchSignalFolder(home, with: inotifyFD)
                    changed = true
                }
                // The store file moved or removed: whoever holds it open must look (`Store.isStillAtItsPath`).
                if name == Home.storeName || Store.sidecarSuffixes.contains(where: { name == Home.storeName + $0 }),
                   mask & (UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM)) != 0 { changed = true }
                // The folder's watch is gone, or events were lost: count it as a change, since one may have been
                // missed meanwhile, and watch the folder there is now, if a writer made one already (its creation
                // may be among the events lost). Without this, every watcher, the daemon's included, would wait
                // for ever.
                if mask & (UInt32(IN_IGNORED) | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF) | UInt32(IN_Q_OVERFLOW)) != 0 {
                    Self.watchSignalFolder(home, with: inotifyFD)
                    changed = true
                }
                offset += MemoryLayout<inotify_event>.size + nameLength
            }
        }
    }
}
