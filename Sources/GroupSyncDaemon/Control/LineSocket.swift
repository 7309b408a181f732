import Glibc
import GroupSyncStore

/// Newline-delimited messages on a blocking socket, bounded so a confused client cannot grow memory.
enum LineSocket {
    /// The longest request line the daemon reads.
    static let maxLineBytes = 1 << 20
    /// The longest answer a client reads: a `get` of a value at the store's 1 MiB limit is longer than the
    /// value (JSON escapes a control byte as six, base64 grows data by a third), so answers get more room.
    static let maxAnswerBytes = 8 << 20

    /// Reads newline-terminated lines, keeping what follows a newline for the next call.
    struct Reader {
        let fd: Int32
        let timeoutMillis: Int32
        let maxLineBytes: Int
        private var buffer: [UInt8] = []
        /// How much of `buffer` is known to hold no newline.
        private var scanned = 0
        /// Reused for every read: a client reads one short answer per request, many times a second.
        private var chunk = [UInt8](repeating: 0, count: 16 * 1024)

        init(fd: Int32, timeoutMillis: Int32, maxLineBytes: Int) {
            self.fd = fd
            self.timeoutMillis = timeoutMillis
            self.maxLineBytes = maxLineBytes
        }

        /// The next line without its newline; `nil` at the end, on a timeout, or past `maxLineBytes`.
        mutating func next() -> String? {
            while true {
                // Only the bytes not looked at yet: scanning the whole buffer after every read made a long
                // answer (a few MiB in 16 KiB reads) cost quadratic time.
                if let newline = buffer[scanned...].firstIndex(of: 10) {
                    let line = String(decoding: buffer[..<newline], as: UTF8.self)
                    buffer.removeSubrange(...newline)
                    scanned = 0
                    return line
                }
                scanned = buffer.count
                guard buffer.count < maxLineBytes else { return nil }
                // Wait in `poll`, not in a blocking `read`: a reader blocked in `read` is woken each time the
                // daemon reads this socket's request (the kernel signals "room to write" on the same queue),
                // a wasted wake-up per request on both sides; `poll` is woken only by the answer.
                var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&waiting, 1, timeoutMillis)
                if ready < 0 && errno == EINTR { continue }
                guard ready > 0 else { return nil }
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return nil }
                buffer += chunk[0..<n]
            }
        }
    }

    static func writeLine(_ fd: Int32, _ line: String) -> Bool {
        FileDescriptorIO.writeAll(fd, Array((line + "\n").utf8))
    }
}
