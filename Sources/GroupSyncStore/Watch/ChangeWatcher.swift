import Glibc

/// Waits for `ChangeSignal`s in a home with inotify: blocked in `poll`, it costs no CPU until a writer
/// in any process commits. Watching the signal's folder (not the file) survives the file being recreated.
/// `wait` belongs to one thread; `wake` may be called from any (it only writes to a pipe).
public final class ChangeWatcher: @unchecked Sendable {
    private let inotifyFD: Int32
    /// A self-pipe other threads can poke to wake a blocked `wait` (used by the daemon to shut down).
    private let wakeFD: Int32
    private let wakeWriteFD: Int32

    public init(home: Home) throws(HomeError) {
        inotifyFD = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard inotifyFD >= 0 else { throw .cannotRead(path: home.path, reason: "inotify: \(String(cString: strerror(errno)))") }
        // IN_MODIFY is the signal; the others catch the file being created or replaced by a writer.
        let mask = UInt32(IN_MODIFY) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO) | UInt32(IN_CREATE)
        let folder = home.changeSignalFolder
        guard home.createChangeSignalFolder(), inotify_add_watch(inotifyFD, folder, mask) >= 0 else {
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

    public enum Wake { case changed, woken, timedOut }

    /// Blocks until a change is signalled, `wake()` is called, or `timeoutMillis` passes (-1: forever).
    public func wait(timeoutMillis: Int32 = -1) -> Wake {
        var fds = [pollfd(fd: inotifyFD, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        while true {
            let rc = poll(&fds, 2, timeoutMillis)
            if rc < 0 && errno == EINTR { continue }
            if rc <= 0 { return .timedOut }
            if fds[1].revents != 0 {
                var drained = [UInt8](repeating: 0, count: 64)
                _ = read(wakeFD, &drained, drained.count)
                return .woken
            }
            if drainSignalledChange() { return .changed }
            fds[0].revents = 0
        }
    }

    /// Wakes a thread blocked in `wait`; safe from any thread.
    public func wake() {
        var one: UInt8 = 1
        _ = write(wakeWriteFD, &one, 1)
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
                if name == Home.changeSignalName { changed = true }
                offset += MemoryLayout<inotify_event>.size + nameLength
            }
        }
    }
}
