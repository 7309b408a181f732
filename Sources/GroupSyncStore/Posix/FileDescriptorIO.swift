import Glibc

/// Writing a whole buffer to a file descriptor, retrying short writes and EINTR. Every place that writes
/// to a descriptor (the console, the daemon log, the control socket, atomic file writes) goes through here.
public enum FileDescriptorIO {
    /// `false` if the descriptor failed (e.g. EPIPE: the reader went away); `errno` says why.
    @discardableResult
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var remaining = bytes[...]
        while !remaining.isEmpty {
            let n = remaining.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            remaining = remaining.dropFirst(n)
        }
        return true
    }
}
