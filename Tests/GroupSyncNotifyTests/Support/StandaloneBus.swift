import Foundation
import GroupSyncTestSupport

/// A session bus daemon at a fixed socket path, that a test can stop and start again at the same address —
/// what a user's session bus does across a re-login, and what `dbus-run-session` cannot show.
final class StandaloneBus {
    let socketPath = NotifyTestTools.temporaryFile("bus")
    var address: String { "unix:path=\(socketPath)" }
    private var daemon: ChildProcess?

    func start() throws {
        guard let dbusDaemon = NotifyTestTools.dbusDaemon else { throw HarnessError("dbus-daemon is not installed") }
        let child = try ChildProcess(dbusDaemon,
                                     ["--config-file=\(NotifyTestTools.busConfig)", "--address=\(address)", "--nofork", "--print-address=1"],
                                     stdout: .pipe)
        guard let printed = try child.readLine(), printed.hasPrefix(address) else {
            child.terminate()
            throw HarnessError("dbus-daemon did not start at \(address)")
        }
        daemon = child
    }

    func stop() {
        daemon?.terminate()
        daemon = nil
        try? FileManager.default.removeItem(atPath: socketPath)
    }

    deinit { stop() }
}
