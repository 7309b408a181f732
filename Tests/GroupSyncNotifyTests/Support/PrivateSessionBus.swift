import Foundation
import GroupSyncCore
import GroupSyncNotify
import GroupSyncTestSupport

/// A private session bus from `dbus-run-session`, with a `notify-probe` on it (a real `LibnotifyNotifier` in
/// its own process, since libnotify uses one session bus per process) and a recording server that can be
/// stopped and started again.
final class PrivateSessionBus {
    let address: String
    let probe: ProbeNotifier
    let server: RecordingServer

    init() throws {
        guard let runner = NotifyTestTools.dbusRunSession else { throw HarnessError("dbus-run-session is not installed") }
        var environment = ProcessInfo.processInfo.environment
        // No X11 autolaunch of some other bus, whatever the environment running the tests has.
        environment["DISPLAY"] = nil
        let child = try ChildProcess(runner, ["--config-file=\(NotifyTestTools.busConfig)", "--", NotifyTestTools.probe],
                                     environment: environment, stdin: .pipe, stdout: .pipe)
        probe = try ProbeNotifier(child)
        guard let address = probe.busAddress, !address.isEmpty else { throw HarnessError("dbus-run-session gave the probe no bus") }
        self.address = address
        server = RecordingServer(log: NotifyTestTools.temporaryFile("calls.jsonl"))
    }

    func startServer(capabilities: [String]? = nil) throws { try server.start(busAddress: address, capabilities: capabilities) }
    func stopServer() { server.stop() }

    deinit {
        server.stop()
        probe.end()
        try? FileManager.default.removeItem(atPath: server.log)
    }
}
