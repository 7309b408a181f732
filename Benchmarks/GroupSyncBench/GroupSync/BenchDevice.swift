import Foundation
import GroupSyncCore
import GroupSyncDaemon
import GroupSyncStore

/// One GroupSync device for the bench: a home in a temporary folder, the real release `groupsync` binary,
/// and its daemon, started on a free loopback port (port 0; the bound port is read from `status --json`, as
/// the CLI tests do).
final class BenchDevice {
    let name: String
    let binary: String
    let home: Home
    let id: DeviceID
    let logPath: String
    private(set) var daemon: Subprocess?
    private(set) var port: UInt16 = 0

    init(_ name: String, binary: String, in folder: TemporaryFolder) throws {
        self.name = name
        self.binary = binary
        home = Home(path: folder.subpath(name))
        logPath = folder.subpath(name + ".log")
        let result = try Subprocess.run(binary, ["--home", home.path, "init", "--name", name])
        guard result.status == 0, let line = result.stdout.split(separator: "\n").first else {
            throw BenchError("groupsync init \(name) failed (exit \(result.status))")
        }
        id = try DeviceID(parsing: String(line))
    }

    deinit { _ = daemon?.stop(signal: SIGKILL) }

    var pid: Int32? { daemon?.pid }

    /// A store handle in this process, for seeding, in-process writes and reading progress. Its commits
    /// signal the home like the CLI's do, so a running daemon forwards them at once.
    func openStore(signalCommits: Bool = true) throws -> Store {
        let store = try Store(path: home.storePath, device: id)
        if signalCommits {
            let signal = ChangeSignal(home: home)
            store.didCommit = { signal.post() }
        }
        return store
    }

    @discardableResult
    func cli(_ arguments: String...) throws -> (status: Int32, stdout: String) {
        try Subprocess.run(binary, ["--home", home.path] + arguments)
    }

    /// Starts `serve`; the first start picks a free port (or `port`), later starts reuse it.
    /// Without `waitReady` it returns at once: no `status` processes then compete with what is measured.
    func start(port chosen: UInt16? = nil, waitReady: Bool = true) throws {
        precondition(daemon == nil, "\(name) already runs")
        if let chosen { port = chosen }
        daemon = try Subprocess(binary, ["--home", home.path, "serve", "--listen", "127.0.0.1:\(port)"],
                                stdout: .discard, stderr: .file(logPath))
        guard waitReady else { return }
        let deadline = Deadline(seconds: 15, "\(name)'s daemon to come up")
        while true {
            if let text = status()?["listen"] as? String,
               let bound = text.split(separator: ":").last.flatMap({ UInt16($0) }), bound != 0 {
                port = bound
                return
            }
            guard daemon?.isRunning == true else { throw BenchError("\(name)'s daemon exited; see \(logPath)") }
            try deadline.check()
            usleep(5000)
        }
    }

    func stop() {
        daemon?.stop()
        daemon = nil
    }

    /// The daemon's status, asked on its control socket (what `status --json` prints), or nil if no daemon
    /// answers. Asked directly rather than through the CLI: one process less per poll.
    func status() -> [String: Any]? {
        guard let json = ControlClient.request(home: home, #"{"command":"status"}"#),
              let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else { return nil }
        return object
    }

    /// Pairs this device with `other`, dialing it at `port` (the other's own port, or a proxy in front of it).
    func pair(with other: BenchDevice, viaPort port: UInt16) throws {
        let result = try cli("peer", "add", other.id.description, "127.0.0.1:\(port)", "--name", other.name)
        guard result.status == 0 else { throw BenchError("\(name): peer add \(other.name) failed") }
    }

    func unpair(_ other: BenchDevice) throws {
        try cli("peer", "remove", other.id.description)
    }

    /// How many peers the daemon reports connected.
    func connectedPeers() -> Int {
        guard let peers = status()?["peers"] as? [[String: Any]] else { return 0 }
        return peers.filter { $0["connected"] as? Bool == true }.count
    }

    func waitConnected(_ count: Int, seconds: Double = 20) throws {
        let deadline = Deadline(seconds: seconds, "\(name) to connect to \(count) peer(s)")
        while connectedPeers() < count { try deadline.check(); usleep(10_000) }
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
}
