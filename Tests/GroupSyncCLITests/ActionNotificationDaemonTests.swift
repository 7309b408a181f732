import Foundation
import Testing
import GroupSyncCore

/// `fire`'s notification actions through a real daemon on a private session bus with the recording server:
/// a request made while no daemon ran is shown when one starts, once; `removeAllDeliveredNotifications` takes
/// down what the app's actions showed, whether a daemon runs at the time or only starts later.
@Suite(.serialized, .enabled(if: TestSessionBus.available, "needs dbus-daemon (apt: dbus) and /usr/bin/python3 with python3-dbus and python3-gi"))
struct ActionNotificationDaemonTests {
    let suite = "group.honorfit"

    /// Device "a" with its daemon running on a private session bus that has the recording server (holding a
    /// Notify call with `slowSummary` for 1.5 s).
    private func runningOnItsOwnBus(in folder: TemporaryFolder, slowSummary: String? = nil) throws -> (TestSessionBus, TestDevice) {
        let bus = try TestSessionBus(log: folder.path + "/calls.jsonl")
        try bus.startServer(slowSummary: slowSummary, slowSeconds: 1.5)
        let a = try TestDevice("a", in: folder)
        try a.start(environment: bus.environment)
        return (bus, a)
    }

    private func request(_ device: TestDevice, _ identifier: String) throws -> [String: Value] {
        let text = try device.cli.run("get", suite, "groupsync.notification." + identifier).stdout
        guard case .dictionary(let fields) = try JSONParser.parse(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { return [:] }
        return fields
    }

    /// The request's status once it is `expected`, or the last one seen after `timeout`.
    private func status(_ device: TestDevice, _ identifier: String, becomes expected: String, timeout: TimeInterval = 5) throws -> Value? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let status = try request(device, identifier)["status"]
            if status == .string(expected) || Date() > deadline { return status }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// A callback at boot, before `serve`: the request stays pending, and the daemon shows it when it starts.
    @Test func aNotificationFiredWithNoDaemonIsShownWhenOneStartsAndOnlyOnce() throws {
        let folder = TemporaryFolder()
        let bus = try TestSessionBus(log: folder.path + "/calls.jsonl")
        try bus.startServer()
        let a = try TestDevice("a", in: folder)
        try a.cli.run("set", suite, "actions_for_focus_intervalDidStart", "--json",
                      #"[{"type":"sendNotification","payload":{"identifier":"focus-start","title":"{activityName} started","body":"Stay on task"}}]"#)
        let fired = try a.cli.run("fire", "--suite", suite, "--activity", "focus", "--callback", "intervalDidStart")
        #expect(fired.status == 0 && fired.stdout.contains("notification focus-start: pending"), "\(fired.stdout)\(fired.stderr)")
        #expect(try request(a, "focus-start")["status"] == .string("pending"))

        try a.start(environment: bus.environment)
        let notifies = bus.calls("Notify")
        #expect(notifies.count == 1 && notifies.first?["summary"] == .string("focus started"), "\(notifies)\n\(a.log)")
        #expect(notifies.first?["body"] == .string("Stay on task"))
        #expect(try status(a, "focus-start", becomes: "shown") == .string("shown"), "\(a.log)")

        // A restart finds the request already shown: it is not shown again.
        a.stop()
        try a.start(environment: bus.environment)
        Thread.sleep(forTimeInterval: 1)
        #expect(bus.calls("Notify", timeout: 0).count == 1, "\(bus.calls("Notify", timeout: 0))")
        #expect(try request(a, "focus-start")["status"] == .string("shown"))
    }

    /// Two notifications of one callback reach the screen in the order the app listed them, with the daemon
    /// running and when it starts later: they came sorted by identifier (found by review).
    @Test func aCallbacksNotificationsAreShownInTheOrderListed() throws {
        let folder = TemporaryFolder()
        let (bus, a) = try runningOnItsOwnBus(in: folder)
        try a.cli.run("set", suite, "actions_for_focus_intervalDidStart", "--json",
                      #"[{"type":"sendNotification","payload":{"identifier":"z-first","title":"first"}},"#
                      + #"{"type":"sendNotification","payload":{"identifier":"m-second","title":"second"}},"#
                      + #"{"type":"sendNotification","payload":{"identifier":"a-third","title":"third"}}]"#)
        try a.cli.run("fire", "--suite", suite, "--activity", "focus", "--callback", "intervalDidStart")
        func summaries(_ count: Int) -> [Value?] {
            let deadline = Date().addingTimeInterval(5)
            var calls = bus.calls("Notify", timeout: 0)
            while calls.count < count, Date() < deadline { Thread.sleep(forTimeInterval: 0.05); calls = bus.calls("Notify", timeout: 0) }
            return calls.map { $0["summary"] }
        }
        #expect(summaries(3) == [.string("first"), .string("second"), .string("third")], "\(a.log)")
        // Fired while no daemon ran (a callback at boot): shown in that order when it starts.
        a.stop()
        try a.cli.run("set", suite, "actions_for_focus_intervalDidEnd", "--json",
                      #"[{"type":"sendNotification","payload":{"identifier":"y-end","title":"fourth"}},"#
                      + #"{"type":"sendNotification","payload":{"identifier":"b-end","title":"fifth"}}]"#)
        try a.cli.run("fire", "--suite", suite, "--activity", "focus", "--callback", "intervalDidEnd")
        try a.start(environment: bus.environment)
        #expect(summaries(5).suffix(2) == [.string("fourth"), .string("fifth")], "\(a.log)")
    }

    @Test func removeAllDeliveredNotificationsDismissesWhatTheActionsShowed() throws {
        let folder = TemporaryFolder()
        let (bus, a) = try runningOnItsOwnBus(in: folder)
        try a.cli.run("set", suite, "actions_for_focus_intervalDidStart", "--json",
                      #"[{"type":"sendNotification","payload":{"identifier":"focus-start","title":"Focus started"}}]"#)
        try a.cli.run("set", suite, "actions_for_focus_intervalDidEnd", "--json", #"[{"type":"removeAllDeliveredNotifications"}]"#)
        let shown = try a.cli.run("fire", "--suite", suite, "--activity", "focus", "--callback", "intervalDidStart")
        #expect(shown.stdout.contains("notification focus-start: shown"), "\(shown.stdout)\(shown.stderr)")
        let number = bus.calls("Notify").first?["returned"]
        #expect(number != nil)

        // While the daemon runs: dismissed at once.
        let ended = try a.cli.run("fire", "--suite", suite, "--activity", "focus", "--callback", "intervalDidEnd")
        #expect(ended.status == 0 && ended.stdout.contains("notification focus-start: removed"), "\(ended.stdout)\(ended.stderr)")
        #expect(bus.calls("CloseNotification").first?["id"] == number, "\(a.log)")
        #expect(try request(a, "focus-start")["status"] == .string("removed"))

        // Shown again, then the daemon stops before the interval ends: the removal waits for the next daemon,
        // which closes the notification still on the screen.
        try a.cli.run("fire", "--suite", suite, "--activity", "focus", "--callback", "intervalDidStart", "--at", "\(Int64(Date().timeIntervalSince1970 * 1000) + 1)")
        let second = bus.calls("Notify", atLeast: 2)
        #expect(second.count == 2)
        a.stop()
        let offline = try a.cli.run("fire", "--suite", suite, "--activity", "focus", "--callback", "intervalDidEnd")
        #expect(offline.stdout.contains("notification focus-start: removing"), "\(offline.stdout)\(offline.stderr)")
        try a.start(environment: bus.environment)
        #expect(bus.calls("CloseNotification", atLeast: 2).count == 2, "\(a.log)")
        #expect(try status(a, "focus-start", becomes: "removed") == .string("removed"))
        #expect(bus.calls("Notify", timeout: 0).count == 2, "nothing shown again")
    }

    /// A request that waited for a notification server says `shown` once one appeared and showed it; a pending
    /// removal then leaves it on screen (it is delivered: `removeAllDeliveredNotifications` takes those down).
    @Test func aRequestThatWaitedForAServerSaysShownOnceItIs() throws {
        let folder = TemporaryFolder()
        let bus = try TestSessionBus(log: folder.path + "/calls.jsonl")
        let a = try TestDevice("a", in: folder)
        try a.start(environment: bus.environment)
        try a.cli.run("set", suite, "actions_for_focus_intervalDidStart", "--json",
                      #"[{"type":"sendNotification","payload":{"identifier":"hello","title":"Hello"}}]"#)
        try a.cli.run("set", suite, "actions_for_focus_intervalDidEnd", "--json",
                      #"[{"type":"removePendingNotificationRequests","identifiers":["hello"]}]"#)
        let fired = try a.cli.run("fire", "--suite", suite, "--activity", "focus", "--callback", "intervalDidStart")
        #expect(fired.stdout.contains("notification hello: waiting"), "\(fired.stdout)\(fired.stderr)")
        try bus.startServer()
        Thread.sleep(forTimeInterval: 2.1)  // activity looks for a server at most every 2 s
        try a.cli.run("set", "s", "k", "any change")
        #expect(bus.calls("Notify").first?["summary"] == .string("Hello"), "\(a.log)")
        #expect(try status(a, "hello", becomes: "shown") == .string("shown"), "\(a.log)")
        let removal = try a.cli.run("fire", "--suite", suite, "--activity", "focus", "--callback", "intervalDidEnd")
        #expect(removal.stdout.contains("removed 0 pending requests"), "\(removal.stdout)")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(bus.calls("CloseNotification", timeout: 0).isEmpty)
    }

    /// A pending removal that deletes a request while the daemon is showing it (found by review: the post reached
    /// the screen, the app was told the request was removed before it was shown, and nothing was left to take
    /// it down by, `removeAllDeliveredNotifications` included): what was shown is taken back.
    @Test func aRequestRemovedWhileItIsBeingShownIsTakenBack() throws {
        let folder = TemporaryFolder()
        let (bus, a) = try runningOnItsOwnBus(in: folder, slowSummary: "Slow")
        try a.cli.run("set", suite, "actions_for_show_intervalDidStart", "--json",
                      #"[{"type":"sendNotification","payload":{"identifier":"slow","title":"Slow"}}]"#)
        try a.cli.run("set", suite, "actions_for_stop_intervalDidStart", "--json", #"[{"type":"removeAllPendingNotificationRequests"}]"#)
        let show = try a.cli.start(["fire", "--suite", suite, "--activity", "show", "--callback", "intervalDidStart"])
        defer { show.terminate() }
        #expect(bus.calls("NotifyHeld").count == 1, "the daemon is in its Notify call\n\(a.log)")
        let removal = try a.cli.run("fire", "--suite", suite, "--activity", "stop", "--callback", "intervalDidStart")
        #expect(removal.stdout.contains("removed 1 pending request"), "\(removal.stdout)\(removal.stderr)")
        #expect(show.waitForExit(timeout: .seconds(10)) == .exited(0))
        let shown = try #require(bus.calls("Notify").first?["returned"], "shown once the server answered")
        let closes = bus.calls("CloseNotification")
        #expect(closes.contains { $0["id"] == shown }, "taken back: \(closes)\n\(a.log)")
        #expect(a.awaitLog(containing: #"event=action-notification-withdrawn suite="group.honorfit" id="slow""#), "\(a.log)")
        #expect(try a.cli.run("get", suite, "groupsync.notification.slow").status == 1, "the request stays removed")
    }

    /// Both devices fire the same callback at once and b's request, written a moment later, replaces a's before
    /// a's daemon looks (here a's hand-over comes once b's request has reached a): a shows its own request all
    /// the same, once, and leaves b's record alone (found by review: a never showed it, and its fire said
    /// `pending`). `fire` hands over what it wrote; the daemon's answer is what `fire` prints.
    @Test func aRequestAPeersReplacedBeforeItWasShownIsShownAllTheSame() throws {
        let folder = TemporaryFolder()
        let (busA, _, a, b) = try pairedDevicesOnTheirOwnBuses(in: folder)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        func written(by device: TestDevice, _ title: String) -> String {
            #"{"title":"\#(title)","status":"pending","device":"\#(device.id)","requestedAt":\#(now)}"#
        }
        try b.cli.run("set", suite, "groupsync.notification.start", "--json", written(by: b, "from b"))
        let deadline = Date().addingTimeInterval(10)
        while try request(a, "start")["device"] != .string(b.id), Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(try request(a, "start")["device"] == .string(b.id), "b's request reached a")

        let client = try UnixClient(path: a.cli.home + "/control.sock")
        let answer = client.request(#"{"command":"notify-actions","suite":"\#(suite)","handedOver":{"start":\#(written(by: a, "from a"))}}"#)
        #expect(answer.contains(#""start":"shown""#), "\(answer)\n\(a.log)")
        #expect(busA.calls("Notify").first?["summary"] == .string("from a"), "\(a.log)")
        Thread.sleep(forTimeInterval: 0.3)
        #expect(busA.calls("Notify", timeout: 0).count == 1, "shown once")
        #expect(try request(a, "start")["device"] == .string(b.id), "b's record is left as it is")
        #expect(client.request(#"{"command":"notify-actions","suite":"\#(suite)","handedOver":{"start":"text"}}"#).contains(#""badInput":true"#))
    }

    /// b's request for the same identifier replaces a's while a's daemon is showing a's: a's `fire` says what
    /// became of its own request (shown), not the status of b's that replaced it (it said `pending`).
    @Test func aRequestAPeersReplacedWhileItWasShownIsAnsweredAsShown() throws {
        let folder = TemporaryFolder()
        let busA = try TestSessionBus(log: folder.path + "/a.jsonl")
        try busA.startServer(slowSummary: "Slow", slowSeconds: 1.5)
        let a = try TestDevice("a", in: folder), b = try TestDevice("b", in: folder)
        try a.start(environment: busA.environment)
        try b.start()
        try pairAll([a, b])
        try a.cli.run("set", suite, "actions_for_show_intervalDidStart", "--json",
                      #"[{"type":"sendNotification","payload":{"identifier":"slow","title":"Slow"}}]"#)
        let show = try a.cli.start(["fire", "--suite", suite, "--activity", "show", "--callback", "intervalDidStart"])
        defer { show.terminate() }
        #expect(busA.calls("NotifyHeld").count == 1, "a's daemon is in its Notify call\n\(a.log)")
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        try b.cli.run("set", suite, "groupsync.notification.slow", "--json",
                      #"{"title":"from b","status":"pending","device":"\#(b.id)","requestedAt":\#(now)}"#)
        let (output, _) = try show.readToEnd(timeout: .seconds(10))
        #expect(output.contains("notification slow: shown"), "\(output)\n\(a.log)")
        #expect(try request(a, "slow")["device"] == .string(b.id), "b's request replaced a's: \(a.log)")
        #expect(busA.calls("CloseNotification", timeout: 0).isEmpty, "a's stays on a's screen")
    }

    /// A removal an app wrote under GroupSync's own "time's up" ID does not take it down (found by review:
    /// `notify dismiss` refused it, a request left for `fire` did not).
    @Test func anAppsRemovalCannotTakeDownTimesUp() throws {
        let folder = TemporaryFolder()
        let (bus, a) = try runningOnItsOwnBus(in: folder)
        try a.runOutOfTime()
        #expect(bus.timesUpPosts(atLeast: 1, timeout: 3).count == 1)
        // A request the app wrote itself (`fire` refuses to make one under this ID), taken back by its removal.
        try a.cli.run("set", suite, "groupsync.notification.groupsync.timesUp", "--json",
                      #"{"title":"app","status":"shown","device":"\#(a.id)"}"#)
        try a.cli.run("set", suite, "actions_for_focus_intervalDidStart", "--json", #"[{"type":"removeAllDeliveredNotifications"}]"#)
        _ = try a.cli.run("fire", "--suite", suite, "--activity", "focus", "--callback", "intervalDidStart")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(bus.calls("CloseNotification", timeout: 0).isEmpty, "\(a.log)")
        if case .string(let status)? = try request(a, "groupsync.timesUp")["status"] {
            #expect(status.hasPrefix("failed:"), "\(status)")
        } else {
            Issue.record("no status: \(a.log)")
        }
    }

    /// Two identifiers that read the same ("café" composed, then decomposed) are two keys to the store and one
    /// to Swift: answering `fire` with both used to stop the daemon.
    @Test func twoIdentifiersThatReadTheSameDoNotStopTheDaemon() throws {
        let folder = TemporaryFolder()
        let (bus, a) = try runningOnItsOwnBus(in: folder)
        for (identifier, title) in [("caf\u{E9}", "composed"), ("cafe\u{301}", "decomposed")] {
            try a.cli.run("set", suite, "actions_for_focus_intervalDidStart", "--json",
                          #"[{"type":"sendNotification","payload":{"identifier":"\#(identifier)","title":"\#(title)"}}]"#)
            let fired = try a.cli.run("fire", "--suite", suite, "--activity", "focus", "--callback", "intervalDidStart")
            #expect(fired.status == 0 && fired.stdout.contains(": shown"), "\(fired.stdout)\(fired.stderr)\n\(a.log)")
        }
        #expect(a.daemon?.isRunning == true, "\(a.log)")
        #expect(try a.status()["running"] == .bool(true))
        #expect(bus.calls("Notify").count == 2, "\(bus.calls("Notify"))")
    }

    /// Another device fired the same fixed identifier after this one (its request replaced ours in the shared
    /// suite): this device's removal still takes down what it showed itself, and leaves the other's request.
    @Test func aRemovalTakesDownWhatThisDeviceShowedAfterAnotherFiredTheSameIdentifier() throws {
        let folder = TemporaryFolder()
        let bus = try TestSessionBus(log: folder.path + "/calls.jsonl")
        try bus.startServer()
        let a = try TestDevice("a", in: folder), other = try TestDevice("other", in: folder)
        try a.start(environment: bus.environment)
        try a.cli.run("set", suite, "actions_for_focus_eventDidReachThreshold_used-1", "--json",
                      #"[{"type":"sendNotification","payload":{"identifier":"countdown","title":"1 min used"}}]"#)
        try a.cli.run("set", suite, "actions_for_app_intervalDidStart", "--json", #"[{"type":"removeAllDeliveredNotifications"}]"#)
        _ = try a.cli.run("fire", "--suite", suite, "--activity", "focus", "--callback", "eventDidReachThreshold", "--event", "used-1")
        let number = try #require(bus.calls("Notify").first?["returned"])
        // The other device's firing of the same identifier, as replication would bring it.
        var theirs = try request(a, "countdown")
        theirs["device"] = .string(other.id)
        try a.cli.run("set", suite, "groupsync.notification.countdown", "--json", JSONWriter.string(for: .dictionary(theirs)))

        let removal = try a.cli.run("fire", "--suite", suite, "--activity", "app", "--callback", "intervalDidStart")
        #expect(removal.stdout.contains("notification countdown: dismissed on this device"), "\(removal.stdout)\(removal.stderr)")
        #expect(bus.calls("CloseNotification").first?["id"] == number, "\(a.log)")
        #expect(try request(a, "countdown")["device"] == .string(other.id) && request(a, "countdown")["status"] == .string("shown"),
                "the other device's request is left as it is")
    }
}
