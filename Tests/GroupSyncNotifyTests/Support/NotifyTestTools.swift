import Foundation
import GroupSyncCore
import GroupSyncTestSupport
import Testing

/// Where the tools and fixtures of the libnotify tests are, and whether this machine has them.
enum NotifyTestTools {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")
    static let recordingServer = fixtures.appendingPathComponent("recording_notification_server.py").path
    static let busConfig = fixtures.appendingPathComponent("session-bus.conf").path

    /// Built beside the test bundle (`.build/debug/notify-probe`).
    static let probe: String = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent().appendingPathComponent("notify-probe").path

    static let dbusRunSession: String? = which("dbus-run-session")
    static let dbusDaemon: String? = which("dbus-daemon")

    /// The libnotify tests run only where a private session bus and the recording server can be started.
    static let available = dbusRunSession != nil && dbusDaemon != nil && FileManager.default.isExecutableFile(atPath: probe)
        && DebianPython.hasDBusAndGLib

    static let skipReason: Comment = "needs dbus-run-session and dbus-daemon (apt: dbus) and /usr/bin/python3 with python3-dbus and python3-gi"

    static func which(_ tool: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(tool)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static func temporaryFile(_ name: String) -> String {
        NSTemporaryDirectory() + "groupsync-notify-\(UUID().uuidString)-\(name)"
    }
}
