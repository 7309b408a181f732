import Glibc
import GroupSyncCore
import GroupSyncStore

/// The daemon's local control socket, `control.sock` in the home (mode 0600 under umask 077, inside a 0700
/// folder: only the user reaches it). One JSON request line in, one JSON response line out.
final class ControlServer: @unchecked Sendable {
    private let fd: Int32
    private let path: String
    private unowned let daemon: Daemon

    init(home: Home, daemon: Daemon) throws(HomeError) {
        path = home.path + "/control.sock"
        self.daemon = daemon
        unlink(path)  // a stale socket from a killed daemon; the daemon lock proves no one else uses it
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw .cannotCreate(path: path, reason: String(cString: strerror(errno))) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var address = UnixSocketAddress.make(path)
        guard address.isValid else {
            Glibc.close(fd)
            throw .cannotCreate(path: path, reason: "path longer than a Unix socket allows; use a shorter --home")
        }
        let bound = withUnsafePointer(to: &address.storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw .cannotCreate(path: path, reason: reason)
        }
    }

    func serve() {
        while true {
            let client = accept(fd, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return  // closed
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            // A client may keep its connection for many requests (an app streaming writes); an idle one is
            // let go after ten minutes so forgotten connections do not pile up.
            var timeout = timeval(tv_sec: 600, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            spawnThread { [self] in
                defer { Glibc.close(client) }
                var reader = LineSocket.Reader(fd: client)
                while let first = reader.next() {
                    // Requests a client pipelined are answered together: their writes share one commit.
                    let requests = [first] + reader.bufferedLines()
                    let answers = respond(to: requests)
                    guard LineSocket.writeLine(client, answers.joined(separator: "\n")) else { return }
                }
            }
        }
    }

    func close() {
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
        unlink(path)
    }

    /// Answers requests in order. Runs of consecutive writes are committed as one group.
    private func respond(to lines: [String]) -> [String] {
        var answers: [String] = []
        var pendingWrites: [[String: Value]] = []
        func flushWrites() {
            answers += daemon.localWrites(pendingWrites)
            pendingWrites.removeAll()
        }
        for line in lines {
            guard case .dictionary(let request)? = try? JSONParser.parse(line), case .string(let command)? = request["command"] else {
                flushWrites()
                answers.append(ControlResponse.error("the request is not a JSON object with a command"))
                continue
            }
            if command == "set" || command == "delete" {
                pendingWrites.append(request)
                continue
            }
            flushWrites()
            switch command {
            case "status": answers.append(daemon.statusReport().json)
            case "get": answers.append(daemon.read(request))
            case "notify-post", "notify-dismiss", "notify-shield": answers.append(NotificationRequests.handle(command, request, daemon.notifications))
            default: answers.append(ControlResponse.error("unknown command '\(command)' (status, get, set, delete, notify-post, notify-dismiss, notify-shield)"))
            }
        }
        flushWrites()
        return answers
    }
}

/// The shapes of the control socket's answers.
enum ControlResponse {
    static func error(_ message: String, notFound: Bool = false) -> String {
        var object = JSONObject()
        object.add("ok", false)
        if notFound { object.add("notFound", true) }
        object.add("error", message)
        return object.text
    }

    static func written(_ change: Change) -> String {
        var object = JSONObject()
        object.add("ok", true)
        object.add("sequence", .int(change.sequence))
        object.add("hlc", change.entry.version.hlc.description)
        return object.text
    }
}

/// A `sockaddr_un` for a path, and whether the path fits.
struct UnixSocketAddress {
    var storage = sockaddr_un()
    var isValid = false

    static func make(_ path: String) -> UnixSocketAddress {
        var address = UnixSocketAddress()
        address.storage.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.storage.sun_path)
        guard bytes.count < capacity else { return address }
        withUnsafeMutableBytes(of: &address.storage.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
            raw[bytes.count] = 0
        }
        address.isValid = true
        return address
    }
}

/// Newline-delimited messages on a blocking socket, bounded so a confused client cannot grow memory.
enum LineSocket {
    static let maxLineBytes = 1 << 20

    /// Reads newline-terminated lines, keeping what follows a newline for the next call.
    struct Reader {
        let fd: Int32
        private var buffer: [UInt8] = []

        init(fd: Int32) { self.fd = fd }

        /// Complete lines already received, without waiting for more.
        mutating func bufferedLines() -> [String] {
            var lines: [String] = []
            while let newline = buffer.firstIndex(of: 10) {
                lines.append(String(decoding: buffer[..<newline], as: UTF8.self))
                buffer.removeSubrange(...newline)
            }
            return lines
        }

        /// The next line without its newline; `nil` at the end, on a timeout, or past `maxLineBytes`.
        mutating func next() -> String? {
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                if let newline = buffer.firstIndex(of: 10) {
                    let line = String(decoding: buffer[..<newline], as: UTF8.self)
                    buffer.removeSubrange(...newline)
                    return line
                }
                guard buffer.count < maxLineBytes else { return nil }
                let n = read(fd, &chunk, chunk.count)
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
