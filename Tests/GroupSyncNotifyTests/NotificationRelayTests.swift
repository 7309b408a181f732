import GroupSyncCore
import GroupSyncNotify
import Testing

/// Two devices, each with its own recording server, replicating the notification records.
@Suite struct NotificationRelayTests {
    static let start: Int64 = 1_732_886_400_000

    static func request(_ title: String = "Time's up", scope: NotificationScope = .all, ttl: Double = 3600) -> NotificationRequest {
        try! NotificationRequest(id: "timesUp", content: NotificationContent(title: title), minIntervalSeconds: 0, scope: scope, ttlSeconds: ttl)
    }

    let phoneServer = RecordingNotifier(), laptopServer = RecordingNotifier()
    let phone: SimulatedDevice, laptop: SimulatedDevice

    init() {
        phone = SimulatedDevice(1, notifier: phoneServer)
        laptop = SimulatedDevice(2, notifier: laptopServer)
    }

    @Test func scopeAllShowsOnEveryDeviceUnderTheSameID() {
        phone.post(Self.request(), now: Self.start)
        sync(phone, laptop, now: Self.start + 100)
        #expect(laptopServer.onScreen.values.map(\.title) == ["Time's up"])
        #expect(laptop.display("timesUp")?.stamp == phone.record("timesUp")?.stamp)
        // A newer post replaces in place on both.
        phone.post(Self.request("Really up"), now: Self.start + 1_000)
        sync(phone, laptop, now: Self.start + 1_100)
        #expect(laptopServer.calls.last == .show(NotificationContent(title: "Really up"), replacesNumber: 1, returned: 1, instance: ":fake.1"))
        #expect(phoneServer.onScreen.count == 1 && laptopServer.onScreen.count == 1)
    }

    @Test func aDismissOnAnyDeviceDismissesEverywhere() {
        phone.post(Self.request(), now: Self.start)
        sync(phone, laptop, now: Self.start + 100)
        laptop.dismiss("timesUp", now: Self.start + 5_000)
        #expect(laptopServer.onScreen.isEmpty)
        sync(phone, laptop, now: Self.start + 5_100)
        #expect(phoneServer.onScreen.isEmpty)
        #expect(phoneServer.calls.last == .close(number: 1, instance: ":fake.1"))
        // A new post after the dismiss shows again, everywhere.
        phone.post(Self.request("Again"), now: Self.start + 60_000)
        sync(phone, laptop, now: Self.start + 60_100)
        #expect(laptopServer.onScreen.values.map(\.title) == ["Again"])
    }

    @Test func nothingIsShownTwiceAfterReconnectsAndRestarts() {
        phone.post(Self.request(), now: Self.start)
        for round in 1...3 { sync(phone, laptop, now: Self.start + Int64(round) * 1_000) }
        laptop.restartDaemon(notifier: laptopServer)
        laptop.presentAll(now: Self.start + 10_000)
        phone.restartDaemon(notifier: phoneServer)
        phone.presentAll(now: Self.start + 10_000)
        sync(phone, laptop, now: Self.start + 11_000)
        #expect(phoneServer.calls.count == 1)
        #expect(laptopServer.calls.count == 1)
        // Closed by the user, lost with a server: still not popped again by a replay.
        laptopServer.startServer()
        laptop.presentAll(now: Self.start + 12_000)
        #expect(laptopServer.calls.count == 1)
    }

    @Test func receiversNeverWriteThePostBackSoThereIsNoEcho() {
        phone.post(Self.request(), now: Self.start)
        sync(phone, laptop, now: Self.start + 100)
        #expect(laptop.replicated.allSatisfy { $0.version.origin == phone.id })
        sync(phone, laptop, now: Self.start + 200)
        #expect(phoneServer.calls.count == 1)
    }

    @Test func aDeviceBackAfterTheTTLDoesNotPopStaleNotifications() {
        phone.post(Self.request(ttl: 60), now: Self.start)
        sync(phone, laptop, now: Self.start + 61_000)
        #expect(laptopServer.calls.isEmpty)
        #expect(laptop.log.last?.contains("older than its time to live") == true)
        // Within the TTL it would have shown.
        let fresh = SimulatedDevice(3, notifier: RecordingNotifier())
        sync(phone, fresh, now: Self.start + 59_000)
        #expect(fresh.display("timesUp") != nil)
    }

    /// Back after the TTL of a post that replaced one it shows, a device takes the older one down too: it is
    /// older news yet.
    @Test func aDeviceBackAfterTheTTLTakesDownWhatTheStalePostReplaced() {
        phone.post(Self.request("10 min left", ttl: 600), now: Self.start)
        sync(phone, laptop, now: Self.start + 100)
        #expect(laptopServer.onScreen.values.map(\.title) == ["10 min left"])
        phone.post(Self.request("Time's up", ttl: 2), now: Self.start + 10_000)
        sync(phone, laptop, now: Self.start + 20_000)
        #expect(laptopServer.onScreen.isEmpty, "\(laptopServer.calls)")
        #expect(laptopServer.calls.filter { if case .show = $0 { true } else { false } }.count == 1, "the stale post is not shown")
    }

    @Test func aDismissMadeWhileADeviceWasAwayKeepsItQuiet() {
        phone.post(Self.request(), now: Self.start)
        phone.dismiss("timesUp", now: Self.start + 1_000)
        sync(phone, laptop, now: Self.start + 2_000)
        #expect(laptopServer.calls.isEmpty)
    }

    @Test func localScopeNeverLeavesTheDevice() {
        phone.post(Self.request(scope: .local), now: Self.start)
        #expect(phoneServer.onScreen.count == 1)
        sync(phone, laptop, now: Self.start + 100)
        #expect(laptopServer.calls.isEmpty)
        #expect(laptop.entries.isEmpty)
        #expect(phone.replicated.isEmpty)
        // Even if a local record were leaked by a faulty replication layer, it stays unseen.
        if let record = phone.record("timesUp") {
            laptop.write(NotificationSuites.localRecords, "timesUp", record.value, now: Self.start + 200)
            laptop.present("timesUp", now: Self.start + 200)
        }
        #expect(laptopServer.calls.isEmpty)
    }

    @Test func concurrentOfflinePostsConvergeOnOneNotification() {
        phone.post(Self.request("from phone"), now: Self.start)
        laptop.post(Self.request("from laptop"), now: Self.start + 10)
        sync(phone, laptop, now: Self.start + 1_000)
        sync(phone, laptop, now: Self.start + 2_000)
        #expect(phoneServer.onScreen.values.map(\.title) == ["from laptop"])
        #expect(laptopServer.onScreen.values.map(\.title) == ["from laptop"])
        #expect(phoneServer.calls.count == 2 && laptopServer.calls.count == 1)
    }
}
