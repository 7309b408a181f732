import Testing
@testable import GroupSyncCore

/// What waits for a missing notification server, and for how long: never forever, and never on a timer
/// without a session bus.
@Suite struct NotificationServerWaitTests {
    static let me = NotificationPlannerTests.me
    static let now = NotificationPlannerTests.now

    static func record(_ generation: Int64, at postedAt: Int64 = now, ttl: Double = 3600, by origin: DeviceID = me,
                       scope: NotificationScope = .local, dismissed: Bool = false) -> NotificationRecord {
        NotificationRecord(id: "n", content: NotificationContent(title: "t"), scope: scope, ttlSeconds: ttl,
                           stamp: NotificationStamp(generation: generation, postedAtMillis: postedAt, origin: origin),
                           dismissal: dismissed ? .init(atMillis: postedAt + 1, by: origin) : nil)
    }

    static func deadline(_ record: NotificationRecord?, _ display: NotificationDisplay? = nil, at now: Int64 = now) -> Int64? {
        NotificationServerWait.deadline(record: record, display: display, device: me, nowMillis: now)
    }

    /// Activity looks for a server again only while something waits, and at most every 2 s.
    @Test func activityLooksForAServerAtMostEveryTwoSecondsWhileSomethingWaits() {
        var wait = NotificationServerWait()
        #expect(!wait.looksAgainOnActivity(nowMillis: Self.now, lastLookMillis: 0), "nothing waits")
        wait.noServer(for: "n", record: Self.record(1), display: nil, device: Self.me, nowMillis: Self.now)
        #expect(wait.looksAgainOnActivity(nowMillis: Self.now, lastLookMillis: Self.now - 2_000))
        #expect(!wait.looksAgainOnActivity(nowMillis: Self.now, lastLookMillis: Self.now - 1_999))
    }

    @Test func onlyAPostStillToBeShownWaitsAndOnlyUntilItExpires() {
        let post = Self.record(1)
        #expect(Self.deadline(post) == post.expiresAtMillis)
        #expect(Self.deadline(post, at: post.expiresAtMillis - 1) == post.expiresAtMillis)
        #expect(Self.deadline(post, at: post.expiresAtMillis) == nil, "past its time to live")
        // A newer post of an ID shown before waits too: it has to replace the old one.
        let shown = NotificationDisplay.shown(Self.record(1, at: Self.now - 5), as: ServerNotification(number: 3, serverInstance: ":1.2"), atMillis: Self.now - 5)
        #expect(Self.deadline(post, shown) == post.expiresAtMillis)
    }

    /// A relayed post from a device whose clock is 90 s ahead, 60 s to live, arriving at once on a device
    /// with no server yet: it waits its whole minute, counted on this device's clock.
    @Test func aRelayedPostWaitsItsTimeToLiveOnThePostersClock() {
        let peer = NotificationPlannerTests.peer
        let post = Self.record(1, at: Self.now + 90_000, ttl: 60, by: peer, scope: .all)
        let arrived = Self.now + 50
        #expect(NotificationServerWait.deadline(record: post, display: nil, device: Self.me, nowMillis: arrived) == post.expiresAtMillis,
                "without the offset the deadline is on the wrong clock")
        #expect(NotificationServerWait.deadline(record: post, display: nil, device: Self.me, nowMillis: arrived, originClockOffsetMillis: 90_000)
                == Self.now + 60_000)
        var waiting = NotificationServerWait()
        waiting.noServer(for: "n", record: post, display: nil, device: Self.me, nowMillis: arrived, originClockOffsetMillis: 90_000)
        waiting.dropExpired(nowMillis: Self.now + 59_000)
        #expect(waiting.ids == ["n"], "still waiting 59 s later by this clock")
    }

    @Test func whatNeedsNoServerDoesNotWait() {
        let post = Self.record(1)
        let onScreen = NotificationDisplay.shown(post, as: ServerNotification(number: 3, serverInstance: ":1.2"), atMillis: Self.now)
        #expect(Self.deadline(nil) == nil, "nothing posted")
        #expect(Self.deadline(Self.record(1, dismissed: true)) == nil, "dismissed before it was shown")
        #expect(Self.deadline(post, onScreen) == nil, "already shown")
        #expect(Self.deadline(post, onScreen.closed()) == nil, "shown, then closed by the user")
        #expect(Self.deadline(Self.record(1, by: NotificationPlannerTests.peer)) == nil, "another device's local post")
        // Dismissed while on screen: the server may only have been slow, so the close is tried again while the
        // post would have been current, and no longer.
        let dismissed = Self.record(1, dismissed: true)
        #expect(Self.deadline(dismissed, onScreen) == dismissed.expiresAtMillis)
        #expect(Self.deadline(dismissed, onScreen, at: dismissed.expiresAtMillis) == nil)
        #expect(Self.deadline(nil, onScreen) == nil, "record deleted")
    }

    /// The reviewer's headless box: two posts, one with a 1 s time to live, both dismissed, then a restart
    /// that replans every record. Nothing is left waiting, so nothing runs on a timer.
    @Test func dismissedAndExpiredPostsLeaveNothingWaiting() {
        var wait = NotificationServerWait()
        let x = Self.record(1), y = Self.record(1, ttl: 1)
        wait.noServer(for: "x", record: x, display: nil, device: Self.me, nowMillis: Self.now)
        wait.noServer(for: "y", record: y, display: nil, device: Self.me, nowMillis: Self.now)
        #expect(wait.ids == ["x", "y"])
        #expect(wait.nextRetryMillis(lastAttemptMillis: Self.now, sessionBus: true) == Self.now + 1_000, "y expires first")

        var dismissedX = x
        dismissedX.dismissal = .init(atMillis: Self.now + 2_000, by: Self.me)
        var dismissedY = y
        dismissedY.dismissal = .init(atMillis: Self.now + 2_000, by: Self.me)
        wait.noServer(for: "x", record: dismissedX, display: nil, device: Self.me, nowMillis: Self.now + 2_000)
        wait.noServer(for: "y", record: dismissedY, display: nil, device: Self.me, nowMillis: Self.now + 2_000)
        #expect(wait.isEmpty)
        #expect(wait.nextRetryMillis(lastAttemptMillis: Self.now + 2_000, sessionBus: true) == nil)

        var restarted = NotificationServerWait()
        for (id, record) in [("x", dismissedX), ("y", dismissedY)] {
            restarted.noServer(for: id, record: record, display: nil, device: Self.me, nowMillis: Self.now + 60_000)
        }
        #expect(restarted.isEmpty)
    }

    @Test func noTimerWithoutASessionBusAndNeverPastTheLastExpiry() {
        var wait = NotificationServerWait()
        let post = Self.record(1, ttl: 120)
        wait.noServer(for: "n", record: post, display: nil, device: Self.me, nowMillis: Self.now)
        #expect(wait.nextRetryMillis(lastAttemptMillis: Self.now, sessionBus: false) == nil, "no bus: look again only on activity")
        #expect(wait.nextRetryMillis(lastAttemptMillis: Self.now, sessionBus: true) == Self.now + NotificationServerWait.retryMillis)
        #expect(wait.nextRetryMillis(lastAttemptMillis: Self.now + 100_000, sessionBus: true) == post.expiresAtMillis)
        wait.dropExpired(nowMillis: post.expiresAtMillis - 1)
        #expect(wait.ids == ["n"])
        wait.dropExpired(nowMillis: post.expiresAtMillis)
        #expect(wait.isEmpty)
        #expect(wait.nextRetryMillis(lastAttemptMillis: post.expiresAtMillis, sessionBus: true) == nil)
    }

    @Test func aPresentedPostStopsWaiting() {
        var wait = NotificationServerWait()
        wait.noServer(for: "n", record: Self.record(1), display: nil, device: Self.me, nowMillis: Self.now)
        wait.presented("n")
        #expect(wait.isEmpty)
    }

    @Test func planningWithoutAServerNeverKeepsANumber() {
        let post = Self.record(1, dismissed: true)
        let onScreen = NotificationDisplay.shown(Self.record(1), as: ServerNotification(number: 3, serverInstance: ":1.2"), atMillis: Self.now)
        #expect(NotificationPlanner.planWithoutServer(record: post, display: onScreen, device: Self.me, nowMillis: Self.now)
                == NotificationPlan(.forget, .dismissedWithServer))
        #expect(NotificationPlanner.planWithoutServer(record: Self.record(1), display: nil, device: Self.me, nowMillis: Self.now).action
                == .show(NotificationContent(title: "t"), replacing: nil))
    }
}
