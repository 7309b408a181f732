import Glibc

/// A minimal Redis client over a plain loopback socket: enough RESP2 for SET, MSET, INFO, DBSIZE,
/// CONFIG and (P)SUBSCRIBE, with pipelining. Written here so Redis is driven from the same process, threads
/// and clock as GroupSync.
final class RESPClient {
    indirect enum Reply: Equatable {
        case simple(String), error(String), integer(Int), bulk([UInt8]?), array([Reply]?)

        var text: String? {
            switch self {
            case .simple(let s), .error(let s): s
            case .bulk(let b?): String(decoding: b, as: UTF8.self)
            case .integer(let i): String(i)
            default: nil
            }
        }
    }

    let fd: Int32
    private var buffer: [UInt8] = []
    private var position = 0

    init(port: UInt16) throws { fd = try Sockets.connect(port: port) }
    deinit { close(fd) }

    static func encode(_ arguments: [String]) -> [UInt8] {
        var out = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            out += Array("$\(argument.utf8.count)\r\n".utf8)
            out += Array(argument.utf8)
            out += [13, 10]
        }
        return out
    }

    func send(_ commands: [[String]]) throws {
        var bytes: [UInt8] = []
        for command in commands { bytes += Self.encode(command) }
        let ok = bytes.withUnsafeBytes { Sockets.writeAll(fd, $0) }
        guard ok else { throw BenchError("redis: write failed") }
    }

    @discardableResult
    func command(_ arguments: String...) throws -> Reply {
        try send([arguments])
        let reply = try readReply()
        if case .error(let text) = reply { throw BenchError("redis \(arguments.first ?? ""): \(text)") }
        return reply
    }

    /// Sends all commands in one write, then reads one reply each.
    func pipeline(_ commands: [[String]]) throws {
        try send(commands)
        for _ in commands {
            if case .error(let text) = try readReply() { throw BenchError("redis: \(text)") }
        }
    }

    func readReply() throws -> Reply {
        let line = try readLine()
        guard let kind = line.first else { throw BenchError("redis: empty reply line") }
        let rest = String(decoding: line.dropFirst(), as: UTF8.self)
        switch kind {
        case UInt8(ascii: "+"): return .simple(rest)
        case UInt8(ascii: "-"): return .error(rest)
        case UInt8(ascii: ":"): return .integer(Int(rest) ?? 0)
        case UInt8(ascii: "$"):
            guard let count = Int(rest), count >= 0 else { return .bulk(nil) }
            let bytes = try readBytes(count + 2)
            return .bulk(Array(bytes.prefix(count)))
        case UInt8(ascii: "*"):
            guard let count = Int(rest), count >= 0 else { return .array(nil) }
            var items: [Reply] = []
            for _ in 0..<count { items.append(try readReply()) }
            return .array(items)
        default: throw BenchError("redis: unexpected reply byte \(kind)")
        }
    }

    /// Whether a complete reply may already be buffered (the socket is not read).
    var hasBufferedBytes: Bool { position < buffer.count }

    private func fill() throws {
        if position > 0 && position == buffer.count { buffer.removeAll(keepingCapacity: true); position = 0 }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = recv(fd, &chunk, chunk.count, 0)
        if n < 0 && errno == EINTR { return }
        guard n > 0 else { throw BenchError("redis: connection closed") }
        buffer += chunk[0..<n]
    }

    private func readLine() throws -> ArraySlice<UInt8> {
        while true {
            if let cr = buffer[position...].firstIndex(of: 13), cr + 1 < buffer.count {
                let line = buffer[position..<cr]
                position = cr + 2
                return line
            }
            try fill()
        }
    }

    private func readBytes(_ count: Int) throws -> ArraySlice<UInt8> {
        while buffer.count - position < count { try fill() }
        defer { position += count }
        return buffer[position..<position + count]
    }
}
