import Foundation
import GroupSyncCore
import GroupSyncNotify
import Testing

/// The real libnotify backend, in a `notify-probe` on a private session bus with the recording server.
///
/// The time limit catches a libnotify call that hangs, well before the run's own limit. It is generous: it
/// measures more than the test's own work, and on 2 cores, beside the blocking process tests, a CI run on a
/// loaded machine once passed a one-minute limit in every test here at once, with nothing hung.
@Suite(.enabled(if: NotifyTestTools.available, NotifyTestTools.skipReason), .timeLimit(.minutes(10)))
struct LibnotifyNotifierTests {
    /// No call may hold the caller for long, server or not.
    static let bound: Duration = .seconds(5)

    static func timed<T>(_ body: () throws -> T) rethrows -> T {
        let started = ContinuousClock.now
        let result = try body()
        #expect(ContinuousClock.now - started < bound)
        return result
    }

    @Test func availabilityNamesTheServerInstance() throws {
        let bus = try PrivateSessionBus()
        try bus.startServer()
        guard case .available(let server) = bus.probe.availability() else { Issue.record("no server"); return }
        // The server's unique bus name, and the bus's own ID: unique names start again on a restarted bus.
        #expect(server.instance.hasPrefix(bus.server.instance + "@"))
        #expect(server.instance.count > bus.server.instance.count + 16)
        #expect(server.name == "groupsync-recorder")
    }

    @Test func aRepostReplacesInPlaceByReplacesID() throws {
        let bus = try PrivateSessionBus()
        try bus.startServer()
        let first = try bus.probe.show(NotificationContent(title: "1 min left", body: "HonorFit"), replacing: nil)
        #expect(first.serverInstance.hasPrefix(bus.server.instance + "@"))
        let second = try bus.probe.show(NotificationContent(title: "0 min left", body: "HonorFit"), replacing: first)
        #expect(second == first)

        let notifies = try bus.server.calls("Notify")
        #expect(notifies.map { $0["replaces_id"] } == [.int(0), .int(Int64(first.number))])
        #expect(notifies.map { $0["summary"] } == [.string("1 min left"), .string("0 min left")])
        #expect(notifies.allSatisfy { $0["app_name"] == .string("GroupSync") && $0["body"] == .string("HonorFit") })
    }

    /// libnotify takes C strings: a NUL in the text is shown as U+FFFD rather than cutting off the rest.
    @Test func aNulInTheTextDoesNotCutItShort() throws {
        let bus = try PrivateSessionBus()
        try bus.startServer()
        _ = try bus.probe.show(NotificationContent(title: "a\0b", body: "c\0d"), replacing: nil)
        let notify = try #require(try bus.server.calls("Notify").first)
        #expect(notify["summary"] == .string("a\u{FFFD}b") && notify["body"] == .string("c\u{FFFD}d"), "\(notify)")
    }

    /// An app's body is plain text. A server that reads markup in bodies ("body-markup") gets it escaped, so that
    /// "Tom & Jerry <3" shows as written; one that does not gets it as it is. A server restarted with other
    /// capabilities is asked again. The title is never markup.
    @Test func aBodyIsEscapedOnlyForAServerThatReadsMarkup() throws {
        let bus = try PrivateSessionBus()
        let text = "Tom & Jerry <3 <b>"
        try bus.startServer()
        _ = try bus.probe.show(NotificationContent(title: text, body: text), replacing: nil)
        bus.stopServer()
        try bus.startServer(capabilities: ["body", "body-markup"])
        _ = try bus.probe.show(NotificationContent(title: text, body: text), replacing: nil)
        _ = try bus.probe.show(NotificationContent(title: "plain", body: "no markup here"), replacing: nil)
        let notifies = try bus.server.calls("Notify")
        #expect(notifies.map { $0["body"] } == [.string(text), .string("Tom &amp; Jerry &lt;3 &lt;b&gt;"), .string("no markup here")])
        #expect(notifies.prefix(2).allSatisfy { $0["summary"] == .string(text) })
    }

    @Test func afterAServerRestartAStoredNumberIsNeverSentAgain() throws {
        let bus = try PrivateSessionBus()
        try bus.startServer()
        let ours = try bus.probe.show(NotificationContent(title: "ours"), replacing: nil)
        let firstInstance = bus.server.instance
        bus.stopServer()
        try bus.startServer()
        #expect(bus.server.instance != firstInstance)

        // Another app gets the number we remember, from the new server.
        let other = try bus.probe.show(NotificationContent(title: "another app"), replacing: nil)
        #expect(other.number == ours.number)

        let again = try bus.probe.show(NotificationContent(title: "ours again"), replacing: ours)
        #expect(again.serverInstance.hasPrefix(bus.server.instance + "@"))
        #expect(again.number != other.number)
        #expect(try bus.probe.close(ours) == .serverChanged)

        let afterRestart = try bus.server.calls().drop { $0["instance"] != .string(bus.server.instance) }
        #expect(afterRestart.filter { $0["event"] == .string("Notify") }.map { $0["replaces_id"] } == [.int(0), .int(0)])
        #expect(!afterRestart.contains { $0["event"] == .string("CloseNotification") })
    }

    @Test func eachLevelReachesTheServerWithItsUrgencyAndHints() throws {
        let bus = try PrivateSessionBus()
        try bus.startServer()
        for level in NotificationLevel.allCases {
            _ = try bus.probe.show(NotificationContent(title: level.rawValue, level: level), replacing: nil)
        }
        let notifies = try bus.server.calls("Notify")
        try #require(notifies.count == NotificationLevel.allCases.count)
        for (level, call) in zip(NotificationLevel.allCases, notifies) {
            let presentation = level.presentation
            guard case .dictionary(let hints)? = call["hints"] else { Issue.record("no hints for \(level)"); continue }
            #expect(hints["urgency"] == .int(Int64(presentation.urgency.rawValue)), "\(level)")
            #expect(hints["suppress-sound"] == (level == .passive ? .bool(true) : nil), "\(level)")
            #expect(hints["resident"] == (level == .timeSensitive ? .bool(true) : nil), "\(level)")
            #expect(hints["category"] == .string("x-groupsync.\(level.rawValue)"), "\(level)")
            #expect(call["expire_timeout"] == .int(Int64(presentation.expireTimeoutMillis)), "\(level)")
        }
        let urgencies: [Value?] = notifies.map { call in
            guard case .dictionary(let hints)? = call["hints"] else { return nil }
            return hints["urgency"]
        }
        #expect(urgencies == [.int(0), .int(1), .int(1), .int(2)])
    }

    @Test func closeSendsCloseNotificationAndAGoneOneIsReportedAsSuch() throws {
        let bus = try PrivateSessionBus()
        try bus.startServer()
        let shown = try bus.probe.show(NotificationContent(title: "Blocked"), replacing: nil)
        #expect(try bus.probe.close(shown) == .closed)
        #expect(try bus.probe.close(shown) == .alreadyGone)
        let closes = try bus.server.calls("CloseNotification")
        #expect(closes.map { $0["id"] } == [.int(Int64(shown.number)), .int(Int64(shown.number))])
    }

    @Test func aBusWithoutAServerIsUnavailableUntilOneAppears() throws {
        let bus = try PrivateSessionBus()
        guard case .unavailable(let reason) = Self.timed({ bus.probe.availability() }) else { Issue.record("a server?"); return }
        #expect(reason.contains("no notification server on the session bus"))
        #expect(throws: NotifierError.self) { try Self.timed { try bus.probe.show(NotificationContent(title: "x"), replacing: nil) } }

        try bus.startServer()
        let shown = try bus.probe.show(NotificationContent(title: "now"), replacing: nil)
        #expect(shown.number == 1)
    }

    @Test func aServerThatStopsMakesCallsUnavailableNotStuck() throws {
        let bus = try PrivateSessionBus()
        try bus.startServer()
        let shown = try bus.probe.show(NotificationContent(title: "x"), replacing: nil)
        bus.stopServer()
        #expect(throws: NotifierError.self) { try Self.timed { try bus.probe.show(NotificationContent(title: "y"), replacing: shown) } }
        #expect(throws: NotifierError.self) { try Self.timed { try bus.probe.close(shown) } }
    }

    @Test func theProcessOutlivesItsSessionBusAndTreatsARestartedBusAsANewServer() throws {
        let bus = StandaloneBus()
        try bus.start()
        let server = RecordingServer(log: NotifyTestTools.temporaryFile("calls.jsonl"))
        defer { server.stop(); try? FileManager.default.removeItem(atPath: server.log) }
        try server.start(busAddress: bus.address)
        let probe = try ProbeNotifier(environment: ProcessInfo.processInfo.environment.merging(["DBUS_SESSION_BUS_ADDRESS": bus.address]) { $1 })
        let shown = try probe.show(NotificationContent(title: "before"), replacing: nil)
        let firstUniqueName = server.instance

        // GLib's default would raise SIGTERM in the probe here.
        server.stop()
        bus.stop()
        guard case .unavailable(let reason) = Self.timed({ probe.availability() }) else { Issue.record("a bus?"); return }
        // Which of the two depends on whether GLib has seen the bus hang up before the call (CI saw both).
        #expect(reason.hasPrefix("no D-Bus session bus") || reason.hasPrefix("the session bus went away"), "\(reason)")

        try bus.start()
        try server.start(busAddress: bus.address)
        // The hazard: on the new bus the new server has the very same unique name.
        #expect(server.instance == firstUniqueName)
        guard case .available(let running) = probe.availability() else { Issue.record("not reconnected"); return }
        #expect(running.instance != shown.serverInstance)

        let after = try probe.show(NotificationContent(title: "after"), replacing: shown)
        #expect(after.serverInstance == running.instance)
        #expect(try probe.close(shown) == .serverChanged)
        let notifies = try server.calls("Notify")
        #expect(notifies.map { $0["replaces_id"] } == [.int(0), .int(0)])
        #expect(try server.calls("CloseNotification").isEmpty)
    }

    @Test(arguments: [
        ("an address that leads nowhere", ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/groupsync-test-bus"], "Could not connect"),
        ("no address and no display", ["DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": "/nonexistent/groupsync-runtime"], "autolaunch"),
    ])
    func noSessionBusAtAllIsAClearErrorNotACrashOrAHang(situation: String, environment: [String: String], expected: String) throws {
        var env = ProcessInfo.processInfo.environment
        env["DISPLAY"] = nil
        for (name, value) in environment { env[name] = value.isEmpty ? nil : value }
        let probe = try ProbeNotifier(environment: env)
        guard case .unavailable(let reason) = Self.timed({ probe.availability() }) else { Issue.record("a bus? (\(situation))"); return }
        #expect(reason.contains("no D-Bus session bus"), "\(situation): \(reason)")
        #expect(reason.contains(expected), "\(situation): \(reason)")
        #expect(throws: NotifierError.unavailable(reason)) { try Self.timed { try probe.show(NotificationContent(title: "x"), replacing: nil) } }
        #expect(throws: NotifierError.unavailable(reason)) { try Self.timed { try probe.close(ServerNotification(number: 1, serverInstance: ":1.1")) } }
        // Still alive and answering after all that.
        #expect(probe.availability() == .unavailable(reason: reason))
    }
}
