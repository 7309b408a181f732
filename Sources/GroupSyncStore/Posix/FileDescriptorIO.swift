import Glibc

/// Writing a whole buffer to a file descriptor, retrying short writes and EINTR. Every place that writes
/// to a descriptor (the console, the daemon log, the control socket, atomic file writes) goes through here.
public enum FileDescriptorIO {
    /// How long a write waits for a full non-blocking descriptor (a client that stopped reading) to take more.
    static let fullDescriptorWaitMillis: Int32 = 30_000

    /// `false` if the descriptor failed (e.g. EPIPE: the reader went away); `errno` says why.
    @discardableResult
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var remaining = bytes[...]
        while !remaining.isEmpty {
            let n = remaining.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                // A non-blocking descriptor (a control-socket client) that is full: wait for room, not forever.
                var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                if poll(&ready, 1, Self.fullDescriptorWaitMillis) == 1 { continue }
                return false
            }
            if n <= 0 { return false }
            remaining = remaining.dropFirst(n)
        }
        return true
    }
}
