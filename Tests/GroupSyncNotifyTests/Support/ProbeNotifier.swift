import Foundation
import GroupSyncCore
import GroupSyncNotify
import GroupSyncTestSupport
import Synchronization

/// A `Notifier` whose calls run in a `notify-probe` process: a real `LibnotifyNotifier` on that process's bus.
final class ProbeNotifier: Notifier, @unchecked Sendable {
    private let child: ChildProcess
    private let lock = Mutex<Void>(())
    /// The probe's DBUS_SESSION_BUS_ADDRESS, from its first line.
    let busAddress: String?

    /// Starts a probe directly, with the given environment (no bus, a bus address that leads nowhere…).
    convenience init(environment: [String: String]) throws {
        try self.init(ChildProcess(NotifyTestTools.probe, [], environment: environment, stdin: .pipe, stdout: .pipe))
    }

    init(_ child: ChildProcess) throws {
        self.child = child
        guard let hello = try child.readLine(), case .dictionary(let fields) = try JSONParser.parse(hello),
              case .string(let bus)? = fields["bus"] else {
            child.terminate()
            throw HarnessError("notify-probe did not start")
        }
        busAddress = bus
    }

    /// One request; the answer's fields. Each answer must come within `timeout`.
    func call(_ request: JSONObject, timeout: Duration = .seconds(15)) throws -> [String: Value] {
        try lock.withLock { _ in
            try child.send(request.text)
            guard let line = try child.readLine(timeout: timeout) else { throw HarnessError("notify-probe ended") }
            guard case .dictionary(let fields) = try JSONParser.parse(line) else { throw HarnessError("bad answer \(line)") }
            return fields
        }
    }

    func end() {
        child.closeInput()
        child.waitForExit()
    }

    deinit { end() }

    // MARK: Notifier

    func availability() -> NotifierAvailability {
        var request = JSONObject()
        request.add("op", "availability")
        do {
            let answer = try call(request)
            if answer["ok"] == .bool(true), case .string(let instance)? = answer["instance"], case .string(let name)? = answer["name"] {
                return .available(NotificationServer(instance: instance, name: name, vendor: "", version: ""))
            }
            return .unavailable(reason: Self.text(answer["error"]))
        } catch {
            return .unavailable(reason: "probe: \(error)")
        }
    }

    func show(_ content: NotificationContent, replacing: ServerNotification?) throws(NotifierError) -> ServerNotification {
        var request = JSONObject()
        request.add("op", "show")
        request.add("title", content.title)
        request.add("body", content.body)
        request.add("level", content.level.rawValue)
        if let replacing {
            request.add("replacing", .dictionary(["number": .int(Int64(replacing.number)), "instance": .string(replacing.serverInstance)]))
        }
        let answer = try answer(request)
        guard case .int(let number)? = answer["number"], case .string(let instance)? = answer["instance"] else {
            throw .failed("probe: bad answer \(answer)")
        }
        return ServerNotification(number: UInt32(number), serverInstance: instance)
    }

    func close(_ notification: ServerNotification) throws(NotifierError) -> CloseResult {
        var request = JSONObject()
        request.add("op", "close")
        request.add("number", Int(notification.number))
        request.add("instance", notification.serverInstance)
        switch try answer(request)["result"] {
        case .string("closed"): return .closed
        case .string("alreadyGone"): return .alreadyGone
        case .string("serverChanged"): return .serverChanged
        case let other: throw .failed("probe: bad close result \(String(describing: other))")
        }
    }

    private func answer(_ request: JSONObject) throws(NotifierError) -> [String: Value] {
        let answer: [String: Value]
        do { answer = try call(request) } catch { throw .failed("probe: \(error)") }
        guard answer["ok"] != .bool(true) else { return answer }
        if answer["kind"] == .string("unavailable") { throw .unavailable(Self.text(answer["error"])) }
        throw .failed(Self.text(answer["error"]))
    }

    private static func text(_ value: Value?) -> String {
        if case .string(let s)? = value { return s }
        return "no error text"
    }
}
