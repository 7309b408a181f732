import Foundation

/// A `redis-server` the bench starts on a free loopback port, in its own directory, with no persistence
/// unless asked (`extra` options), and stops at the end.
final class RedisServer {
    let port: UInt16
    let directory: String
    private let process: Subprocess

    static var executable: String? { Subprocess.which("redis-server") }

    static var version: String? {
        guard let executable, let result = try? Subprocess.run(executable, ["--version"]) else { return nil }
        return result.stdout.split(separator: " ").first { $0.hasPrefix("v=") }.map { String($0.dropFirst(2)) }
    }

    init(directory: String, replicaOfPort: UInt16? = nil, extra: [String] = []) throws {
        guard let executable = Self.executable else { throw BenchError("redis-server is not installed") }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.directory = directory
        port = try Sockets.freePort()
        var arguments = ["--port", String(port), "--bind", "127.0.0.1", "--dir", directory, "--save", "",
                         "--appendonly", "no", "--daemonize", "no", "--protected-mode", "no",
                         "--logfile", directory + "/redis.log",
                         // Full resyncs stream the snapshot straight to the replica, without the default 5 s wait
                         // for more replicas to join.
                         "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"]
        if let replicaOfPort { arguments += ["--replicaof", "127.0.0.1", String(replicaOfPort)] }
        process = try Subprocess(executable, arguments + extra)
        let deadline = Deadline(seconds: 10, "redis-server on \(port) to answer")
        while true {
            if let client = try? RESPClient(port: port), (try? client.command("PING")) == .simple("PONG") { return }
            guard process.isRunning else { throw BenchError("redis-server exited; see \(directory)/redis.log") }
            try deadline.check()
            usleep(5000)
        }
    }

    deinit { stop() }

    var pid: Int32 { process.pid }

    func stop() { process.stop(signal: SIGKILL) }

    func client() throws -> RESPClient { try RESPClient(port: port) }

    /// `INFO section` as a dictionary of its `name:value` lines.
    func info(_ section: String, using client: RESPClient) throws -> [String: String] {
        guard let text = try client.command("INFO", section).text else { return [:] }
        var fields: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        return fields
    }

    /// Writes `count` keys like `Seeding`'s (same names and 80-byte values), pipelined MSETs of 1000.
    func fill(count: Int) throws {
        let client = try client()
        var start = 0
        while start < count {
            let end = min(count, start + 1000)
            var mset = ["MSET"]
            for index in start..<end {
                mset.append(Seeding.suite + ":" + Seeding.key(index))
                if case .string(let text) = Seeding.value(index) { mset.append(text) }
            }
            try client.pipeline([mset])
            start = end
        }
    }
}
