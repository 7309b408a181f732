import Foundation
import GroupSyncCore
import GroupSyncTestSupport

/// The Python recording notification server, on a given bus. Each start is a new server instance that numbers
/// from 1, like a real server after a restart.
final class RecordingServer {
    let log: String
    private(set) var instance: String = ""
    private var process: ChildProcess?

    init(log: String) { self.log = log }

    /// `capabilities`: what its `GetCapabilities` answers (nil: "body", "persistence").
    func start(busAddress: String, capabilities: [String]? = nil) throws {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        let options = capabilities.map { ["--capabilities", $0.joined(separator: ",")] } ?? []
        let child = try ChildProcess(DebianPython.path, [NotifyTestTools.recordingServer, "--log", log] + options, environment: environment,
                                     stdout: .pipe)
        guard let line = try child.readLine(), line.hasPrefix("ready ") else {
            child.terminate()
            throw HarnessError("the recording notification server did not start")
        }
        instance = String(line.dropFirst("ready ".count))
        process = child
    }

    func stop() {
        process?.terminate()
        process = nil
    }

    deinit { stop() }

    /// Every call recorded so far, across all starts, as dictionaries.
    func calls(_ event: String? = nil) throws -> [[String: Value]] {
        guard let text = try? String(contentsOfFile: log, encoding: .utf8) else { return [] }
        return try text.split(separator: "\n").compactMap { line in
            guard case .dictionary(let fields) = try JSONParser.parse(String(line)) else { throw HarnessError("bad log line \(line)") }
            guard event == nil || fields["event"] == .string(event!) else { return nil }
            return fields
        }
    }
}
