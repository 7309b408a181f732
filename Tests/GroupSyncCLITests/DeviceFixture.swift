import Foundation
import GroupSyncCore
import GroupSyncTestSupport
import Testing

/// A device for multi-device tests: its own home, the real `groupsync` binary, and a real daemon process
/// listening on a free loopback port.
final class TestDevice {
    let name: String
    let cli: GroupSyncBinary
    let id: String
    let logPath: String
    private(set) var daemon: ChildProcess?
    var port: UInt16 = 0
    /// Where the daemon listens and peers reach it: loopback, or the device's address in its own network
    /// namespace (`netns`), where the daemon then runs.
    var host = "127.0.0.1"
    var netns: String?
    /// Starts `serve` without `--listen`, at its default (port 22100, which only a namespace of its own has free).
    var listensByDefault = false

    init(_ name: String, in folder: TemporaryFolder) throws {
        self.name = name
        cli = GroupSyncBinary(home: folder.path + "/" + name)
        logPath = folder.path + "/" + name + ".log"
        let result = try cli.run("init", "--name", name)
        guard result.status == 0, let id = result.lines.first else { throw FixtureError("init failed: \(result.stderr)") }
        self.id = id
    }

    /// The same device started again from a copy of `device`'s home (identity, name and store) under another
    /// folder: as the device would restart on another network while its old process is stopped, not gone.
    convenience init(restartingElsewhere device: TestDevice, as name: String, in folder: TemporaryFolder) throws {
        let home = folder.path + "/" + name
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        for file in ["key.pem", "cert.pem", "name", "store.db", "store.db-wal"] where FileManager.default.fileExists(atPath: device.cli.home + "/" + file) {
            try FileManager.default.copyItem(atPath: device.cli.home + "/" + file, toPath: home + "/" + file)
        }
        try self.init(name, in: folder)
        guard id == device.id else { throw FixtureError("the copy of \(device.name)'s home is device \(id)") }
    }

    deinit { stop(signal: SIGKILL) }

    var address: String { "\(host):\(port)" }

    /// Starts `serve`; the first start picks a free port, later starts reuse it so peers can redial.
    func start(environment extra: [String: String] = [:]) throws {
        let serve = ["--home", cli.home, "serve"] + (listensByDefault ? [] : ["--listen", "\(host):\(port)"])
        // `ip netns exec` execs the daemon in place: the process is the daemon, so signals reach it.
        let (executable, arguments) = netns.map { ("/usr/sbin/ip", ["netns", "exec", $0, GroupSyncBinary.path] + serve) }
            ?? (GroupSyncBinary.path, serve)
        daemon = try ChildProcess(executable, arguments, environment: ProcessInfo.processInfo.environment.merging(extra) { $1 },
                                  stderr: .appendingTo(logPath))
        // The daemon answers on its control socket once it listens; read the bound port from there.
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let status = try? self.status(), case .string(let listen)? = status["listen"], let p = listen.split(separator: ":").last.flatMap({ UInt16($0) }), p != 0 {
                port = p
                return
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw FixtureError("\(name)'s daemon did not come up: \(log)")
    }

    /// Stops the daemon with `signal` and waits for it (killing it if it has not ended in 30 s).
    @discardableResult
    func stop(signal: Int32 = SIGTERM) -> Int32? {
        guard let daemon, daemon.isRunning else { return daemon?.ended?.status }
        daemon.signal(signal)
        self.daemon = nil
        return daemon.waitForExit(timeout: .seconds(30)).status
    }

    func pair(with other: TestDevice) throws {
        let result = try cli.run("peer", "add", other.id, other.address, "--name", other.name)
        guard result.status == 0 else { throw FixtureError("peer add failed: \(result.stderr)") }
    }

    func status() throws -> [String: Value] {
        let result = try cli.run("status", "--json")
        guard case .dictionary(let object) = try JSONParser.parse(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines), nullMembers: .omittedEverywhere) else {
            throw FixtureError("status is not an object")
        }
        return object
    }

    /// This device's `status --json` row for `other` (empty if it has none).
    func peerStatus(_ other: TestDevice) throws -> [String: Value] {
        guard case .array(let peers)? = try status()["peers"] else { return [:] }
        for case .dictionary(let peer) in peers where peer["id"] == .string(other.id) { return peer }
        return [:]
    }

    /// This device's status of `other`, read until `holds` is true of it or `timeout` passes: the status that
    /// held, or the last one read. A test looks at that one: read again, it may be the next session's already.
    func peerStatus(_ other: TestDevice, once holds: ([String: Value]) -> Bool, timeout: TimeInterval) throws -> [String: Value] {
        let deadline = Date().addingTimeInterval(timeout)
        var status = try peerStatus(other)
        while !holds(status), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            status = try peerStatus(other)
        }
        return status
    }

    func get(_ key: String, suite: String = "group.test") throws -> String? {
        let result = try cli.run("get", suite, key)
        return result.status == 0 ? String(result.stdout.dropLast()) : nil
    }

    /// Polls until `key` reads `expected` (nil: absent), or the timeout passes; returns the seconds taken.
    @discardableResult
    func await(_ key: String, equals expected: String?, suite: String = "group.test", timeout: TimeInterval = 5) throws -> TimeInterval? {
        let start = Date()
        while Date().timeIntervalSince(start) < timeout {
            if try get(key, suite: suite) == expected { return Date().timeIntervalSince(start) }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return nil
    }

    /// Waits until this device's status shows `other` connected; whether it did within `timeout`.
    func awaitConnected(to other: TestDevice, timeout: TimeInterval = 15) throws -> Bool {
        try peerStatus(other, once: { $0["connected"] == .bool(true) }, timeout: timeout)["connected"] == .bool(true)
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Polls until the log holds `text` (a line is written after the frames of its event); whether it did.
    func awaitLog(containing text: String, timeout: TimeInterval = 5) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !log.contains(text) {
            guard Date() < deadline else { return false }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return true
    }
}

/// A fixture that could not be set up: the test harness failed, not the code under test.
typealias FixtureError = HarnessError

/// Pairs every device with every other one.
func pairAll(_ devices: [TestDevice]) throws {
    for a in devices { for b in devices where a !== b { try a.pair(with: b) } }
}

/// Devices `a` and `b` with their daemons running, paired with each other.
func startedPair(in folder: TemporaryFolder) throws -> (a: TestDevice, b: TestDevice) {
    let a = try TestDevice("a", in: folder), b = try TestDevice("b", in: folder)
    for device in [a, b] { try device.start() }
    try pairAll([a, b])
    return (a, b)
}

/// Devices `a` and `b` with their daemons running and paired, once a first write on `a` (key `first` in
/// `group.test`) has reached `b`: their session is up.
func syncedPair(in folder: TemporaryFolder) throws -> (a: TestDevice, b: TestDevice) {
    let (a, b) = try startedPair(in: folder)
    try a.cli.run("set", "group.test", "first", "1")
    #expect(try b.await("first", equals: "1") != nil, "the first write reached b")
    return (a, b)
}
