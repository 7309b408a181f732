import Glibc
import GroupSyncStore

/// A client's side of the control socket: one connection kept open for many requests, as an app that
/// writes often would keep it. Requests sent together are pipelined — the daemon answers them in order and
/// commits their writes together — so a client can have many writes in flight on one connection.
/// One thread at a time uses a connection.
public final class ControlConnection {
    private let fd: Int32
    private var reader: LineSocket.Reader

    /// Connects to the daemon of `home`; `nil` if none answers there.
    public init?(home: Home, timeoutSeconds: Int = 5) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        // The deadline covers connecting and sending too: a daemon that is stopped (SIGSTOP, Ctrl-Z) accepts
        // nothing, and once its listen queue is full a blocking `connect` waited for good (found by review:
        // `status`, `fire`, `notify` and `balance spend` all hung). A UNIX socket's connect waits at most its
        // send timeout.
        var deadline = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &deadline, socklen_t(MemoryLayout<timeval>.size))
        let connected = UnixSocketAddress.with(home.path + "/control.sock") { connect(fd, $0, $1) } == 0
        guard connected else {
            close(fd)
            return nil
        }
        self.fd = fd
        reader = LineSocket.Reader(fd: fd, timeoutMillis: Int32(clamping: timeoutSeconds * 1000), maxLineBytes: LineSocket.maxAnswerBytes)
    }

    deinit { close(fd) }

    /// Sends one request line and waits for its answer; `nil` if the daemon went away or did not answer in time.
    public func request(_ json: String) -> String? {
        requests([json])?.first
    }

    /// Sends the requests in one write and waits for all their answers, in order; `nil` if any is missing.
    public func requests(_ lines: [String]) -> [String]? {
        guard !lines.isEmpty else { return [] }
        guard LineSocket.writeLine(fd, lines.joined(separator: "\n")) else { return nil }
        var answers: [String] = []
        answers.reserveCapacity(lines.count)
        while answers.count < lines.count {
            guard let answer = reader.next() else { return nil }
            answers.append(answer)
        }
        return answers
    }
}

/// The CLI's side of the control socket: one request per connection.
public enum ControlClient {
    /// Sends one request; `nil` if no daemon answers on this home.
    public static func request(home: Home, _ json: String) -> String? {
        ControlConnection(home: home)?.request(json)
    }
}
