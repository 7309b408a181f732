import Foundation
import GroupSyncCore
import GroupSyncTestSupport

/// A private D-Bus session bus (`dbus-daemon` with no service directories) and, on demand, the recording
/// notification server of the notify tests, for a daemon to show its notifications on.
final class TestSessionBus {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("GroupSyncNotifyTests/Fixtures")
    static let available = FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") && DebianPython.hasDBusAndGLib

    let address: String
    let log: String
    private let bus: ChildProcess
    private var server: ChildProcess?

    init(log: String) throws {
        self.log = log
        bus = try ChildProcess("/usr/bin/dbus-daemon",
                               ["--config-file=" + Self.fixtures.appendingPathComponent("session-bus.conf").path, "--nofork", "--print-address=1"],
                               stdout: .pipe)
        address = try bus.readLine() ?? ""
        guard !address.isEmpty else { throw FixtureError("dbus-daemon gave no address") }
    }

    deinit {
        stopServer()
        bus.terminate()
    }

    var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": address, "DISPLAY": ""] }

    /// `refusingSummary`: the server answers a Notify with that summary with a D-Bus error, as a server that fails;
    /// `refusals` times only, when given. `slowSummary`: it answers a Notify with that summary only after
    /// `slowSeconds`, logging `NotifyHeld` when the call arrives.
    func startServer(refusingSummary: String? = nil, refusals: Int? = nil, slowSummary: String? = nil, slowSeconds: Double = 2) throws {
        let process = try ChildProcess(DebianPython.path, [Self.fixtures.appendingPathComponent("recording_notification_server.py").path, "--log", log]
                                           + (refusingSummary.map { ["--refuse-summary", $0] } ?? [])
                                           + (refusals.map { ["--refusals", "\($0)"] } ?? [])
                                           + (slowSummary.map { ["--slow-summary", $0, "--slow-seconds", "\(slowSeconds)"] } ?? []),
                                       environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }, stdout: .pipe)
        guard try process.readLine()?.hasPrefix("ready ") == true else { throw FixtureError("the recording server did not start") }
        server = process
    }

    func stopServer() {
        server?.terminate()
        server = nil
    }

    /// The server's recorded calls of one kind, waiting up to `timeout` for at least `count` of them.
    func calls(_ event: String, atLeast count: Int = 1, timeout: TimeInterval = 5) -> [[String: Value]] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            let calls = text.split(separator: "\n").compactMap { line -> [String: Value]? in
                guard case .dictionary(let fields)? = try? JSONParser.parse(String(line)), fields["event"] == .string(event) else { return nil }
                return fields
            }
            if calls.count >= count || Date() > deadline { return calls }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }
}

extension TestSessionBus {
    /// The "Time's up" posts logged so far, once there are at least `count` Notify calls or `timeout` passed.
    func timesUpPosts(atLeast count: Int, timeout: TimeInterval) -> [[String: Value]] {
        calls("Notify", atLeast: count, timeout: timeout).filter { $0["summary"] == .string("Time's up") }
    }
}

extension TestDevice {
    /// Earns a minute and spends it: time is up (with no daily allowance).
    func runOutOfTime() throws {
        try cli.run("balance", "earn", "1")
        let spent = try cli.run("balance", "spend", "1")
        guard spent.status == 0 else { throw FixtureError("spend failed: \(spent.stdout)\(spent.stderr)") }
    }
}
