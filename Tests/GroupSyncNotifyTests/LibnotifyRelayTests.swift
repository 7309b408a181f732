import Foundation
import GroupSyncCore
import GroupSyncNotify
import Testing

/// Devices on session buses of their own, each with a real libnotify backend and a recording server:
/// what reaches the servers when the records replicate and the daemons restart.
///
/// The time limit catches a libnotify call that hangs, well before the run's own limit. It is generous: it
/// measures more than the test's own work, and on 2 cores, beside the blocking process tests, a CI run on a
/// loaded machine once passed a one-minute limit in every test here at once, with nothing hung.
@Suite(.enabled(if: NotifyTestTools.available, NotifyTestTools.skipReason), .timeLimit(.minutes(10)))
struct LibnotifyRelayTests {
    static let start: Int64 = 1_732_886_400_000

    static func request(_ title: String, scope: NotificationScope = .all) -> NotificationRequest {
        try! NotificationRequest(id: "timesUp", content: NotificationContent(title: title, level: .passive), scope: scope)
    }

    @Test func aPostRelaysToASecondDeviceAndItsDismissComesBack() throws {
        let phoneBus = try PrivateSessionBus(), laptopBus = try PrivateSessionBus()
        try phoneBus.startServer()
        try laptopBus.startServer()
        let phone = SimulatedDevice(1, notifier: phoneBus.probe), laptop = SimulatedDevice(2, notifier: laptopBus.probe)

        phone.post(Self.request("Time's up"), now: Self.start)
        sync(phone, laptop, now: Self.start + 100)
        let laptopNotifies = try laptopBus.server.calls("Notify")
        #expect(laptopNotifies.map { $0["summary"] } == [.string("Time's up")])
        #expect(laptopNotifies.first?["replaces_id"] == .int(0))

        laptop.dismiss("timesUp", now: Self.start + 5_000)
        #expect(try laptopBus.server.calls("CloseNotification").map { $0["known"] } == [.bool(true)])
        sync(phone, laptop, now: Self.start + 5_100)
        let phoneNumber = try phoneBus.server.calls("Notify").first?["returned"]
        #expect(try phoneBus.server.calls("CloseNotification").map { $0["id"] } == [phoneNumber])

        // Reconnects replay nothing.
        sync(phone, laptop, now: Self.start + 6_000)
        sync(phone, laptop, now: Self.start + 7_000)
        #expect(try phoneBus.server.calls().count == 3)   // ready, Notify, CloseNotification
        #expect(try laptopBus.server.calls().count == 3)
    }

    @Test func localScopeStaysOnItsBus() throws {
        let phoneBus = try PrivateSessionBus(), laptopBus = try PrivateSessionBus()
        try phoneBus.startServer()
        try laptopBus.startServer()
        let phone = SimulatedDevice(1, notifier: phoneBus.probe), laptop = SimulatedDevice(2, notifier: laptopBus.probe)
        phone.post(Self.request("only here", scope: .local), now: Self.start)
        sync(phone, laptop, now: Self.start + 100)
        #expect(try phoneBus.server.calls("Notify").count == 1)
        #expect(try laptopBus.server.calls("Notify").isEmpty)
    }

    @Test func aRestartedDaemonReplacesInPlaceKeepsTheDebounceAndPostsFreshOnARestartedServer() throws {
        let bus = try PrivateSessionBus()
        try bus.startServer()
        let device = SimulatedDevice(1, notifier: bus.probe)
        device.post(Self.request("1 min left"), now: Self.start)

        // A new daemon process on the same bus, with the same store.
        let restarted = try ProbeNotifier(environment: ProcessInfo.processInfo.environment.merging(["DBUS_SESSION_BUS_ADDRESS": bus.address]) { $1 })
        device.restartDaemon(notifier: restarted)
        device.presentAll(now: Self.start + 1_000)
        #expect(device.post(Self.request("still 1 min"), now: Self.start + 10_000) == .suppressed(lastPostedAtMillis: Self.start, untilMillis: Self.start + 30_000))
        device.post(Self.request("0 min left"), now: Self.start + 60_000)
        var notifies = try bus.server.calls("Notify")
        #expect(notifies.map { $0["summary"] } == [.string("1 min left"), .string("0 min left")])
        #expect(notifies.map { $0["replaces_id"] } == [.int(0), notifies[0]["returned"]])

        // The server restarts; another app takes number 1; our next post must not replace it.
        bus.stopServer()
        try bus.startServer()
        _ = try restarted.show(NotificationContent(title: "another app"), replacing: nil)
        device.post(Self.request("time's really up"), now: Self.start + 120_000)
        notifies = try bus.server.calls("Notify")
        #expect(notifies.last?["summary"] == .string("time's really up"))
        #expect(notifies.last?["replaces_id"] == .int(0))
        #expect(notifies.last?["returned"] == .int(2))
    }
}
