import GroupSyncCore
import GroupSyncNotify
import Testing

/// One device, a recording notifier: the daemon's duties around one server, through restarts of both.
@Suite struct NotificationPresenterTests {
    static let start: Int64 = 1_732_886_400_000

    static func request(_ title: String = "Time's up", id: String = "timesUp", minInterval: Double = 30) -> NotificationRequest {
        try! NotificationRequest(id: id, content: NotificationContent(title: title, body: "{eventName}", level: .active), minIntervalSeconds: minInterval)
    }

    @Test func withoutAServerThePostIsKeptAndShownWhenOneAppears() {
        let notifier = RecordingNotifier()
        notifier.stopServer()
        let device = SimulatedDevice(1, notifier: notifier)
        #expect(device.post(Self.request(), now: Self.start) != .suppressed(lastPostedAtMillis: 0, untilMillis: 0))
        #expect(device.record("timesUp") != nil)
        #expect(device.display("timesUp") == nil)
        #expect(device.log.last?.contains("waiting for a notification server: no notification server") == true)
        #expect(notifier.calls.isEmpty)

        notifier.startServer()
        device.presentAll(now: Self.start + 5_000)
        #expect(notifier.calls.count == 1)
        #expect(notifier.onScreen.values.map(\.title) == ["Time's up"])
        // And only once.
        device.presentAll(now: Self.start + 6_000)
        #expect(notifier.calls.count == 1)
    }

    @Test func aRepostReplacesInPlaceAlsoAfterTheDaemonRestarts() {
        let notifier = RecordingNotifier()
        let device = SimulatedDevice(1, notifier: notifier)
        device.post(Self.request("1 min left"), now: Self.start)
        device.restartDaemon(notifier: notifier)
        device.presentAll(now: Self.start + 1_000)
        device.post(Self.request("0 min left"), now: Self.start + 60_000)
        #expect(notifier.calls == [
            .show(NotificationContent(title: "1 min left", body: "{eventName}"), replacesNumber: 0, returned: 1, instance: ":fake.1"),
            .show(NotificationContent(title: "0 min left", body: "{eventName}"), replacesNumber: 1, returned: 1, instance: ":fake.1"),
        ])
        #expect(notifier.onScreen.count == 1)
    }

    @Test func afterAServerRestartAnotherAppsNotificationIsNeverReplaced() throws {
        let notifier = RecordingNotifier()
        let device = SimulatedDevice(1, notifier: notifier)
        device.post(Self.request("first"), now: Self.start)
        notifier.startServer()
        // Another app gets number 1 on the new server: the number our display state still remembers.
        let other = try notifier.show(NotificationContent(title: "other app"), replacing: nil)
        #expect(other.number == 1)

        device.post(Self.request("second"), now: Self.start + 60_000)
        guard case .show(let content, let replaces, let returned, let instance)? = notifier.calls.last else { Issue.record("not shown"); return }
        #expect(content.title == "second" && replaces == 0 && returned == 2 && instance == ":fake.2")
        #expect(notifier.onScreen[1]?.title == "other app")
        #expect(device.log.last?.contains("notification server restarted, posted fresh") == true)

        // Dismissing must not close the other app's number 1 either.
        device.dismiss("timesUp", now: Self.start + 61_000)
        #expect(notifier.calls.last == .close(number: 2, instance: ":fake.2"))
        #expect(notifier.onScreen[1]?.title == "other app")
    }

    @Test func debounceSurvivesARestart() {
        let notifier = RecordingNotifier()
        let device = SimulatedDevice(1, notifier: notifier)
        device.post(Self.request(), now: Self.start)
        device.restartDaemon(notifier: notifier)
        #expect(device.post(Self.request(), now: Self.start + 29_000) == .suppressed(lastPostedAtMillis: Self.start, untilMillis: Self.start + 30_000))
        #expect(notifier.calls.count == 1)
        guard case .accepted = device.post(Self.request(), now: Self.start + 30_000) else { Issue.record("suppressed"); return }
        #expect(notifier.calls.count == 2)
    }

    @Test func dismissClosesAndANotificationTheUserClosedIsForgotten() {
        let notifier = RecordingNotifier()
        let device = SimulatedDevice(1, notifier: notifier)
        device.post(Self.request(), now: Self.start)
        #expect(device.dismiss("timesUp", now: Self.start + 1_000) != .nothingPosted)
        #expect(notifier.onScreen.isEmpty)
        #expect(device.display("timesUp")?.onScreen == nil)
        #expect(device.dismiss("timesUp", now: Self.start + 2_000) == .alreadyDismissed(device.record("timesUp")!))
        #expect(device.dismiss("never", now: Self.start) == .nothingPosted)

        // A post after a dismiss is fresh; then the user closes it before the dismiss arrives.
        device.post(Self.request(), now: Self.start + 40_000)
        let shown = device.display("timesUp")?.onScreen
        #expect(shown == ServerNotification(number: 2, serverInstance: ":fake.1"))
        notifier.userCloses(2)
        device.dismiss("timesUp", now: Self.start + 41_000)
        #expect(device.display("timesUp")?.onScreen == nil)
        #expect(notifier.calls.last == .close(number: 2, instance: ":fake.1"))
    }

    @Test func theShieldConfigurationPostsDebouncedFilledNotifications() throws {
        let notifier = RecordingNotifier()
        let device = SimulatedDevice(1, notifier: notifier)
        let suite = "group.com.honorfit.blocker", key = "honorfitShieldShownNotification"
        device.write(suite, key, try JSONParser.parse(#"{"payload":{"title":"{applicationOrDomainDisplayName} is blocked","body":"Tap to earn time","interruptionLevel":"passive"},"minIntervalSeconds":30}"#), now: Self.start)

        // The shield asks for its configuration several times per showing.
        for offset: Int64 in [0, 200, 900] { _ = try device.shield(suite: suite, configKey: key, app: "Instagram", now: Self.start + offset) }
        #expect(notifier.calls == [.show(NotificationContent(title: "Instagram is blocked", body: "Tap to earn time", level: .passive),
                                         replacesNumber: 0, returned: 1, instance: ":fake.1")])
        #expect(device.value(suite, key + "LastSentAt") == .double(Double(Self.start) / 1000))

        device.restartDaemon(notifier: notifier)
        _ = try device.shield(suite: suite, configKey: key, app: "Safari", now: Self.start + 30_000)
        #expect(notifier.calls.last == .show(NotificationContent(title: "Safari is blocked", body: "Tap to earn time", level: .passive),
                                              replacesNumber: 1, returned: 1, instance: ":fake.1"))
        #expect(throws: NotificationError.missingConfig(suite: suite, key: "nope")) {
            try device.shield(suite: suite, configKey: "nope", app: "x", now: Self.start)
        }
    }
}
