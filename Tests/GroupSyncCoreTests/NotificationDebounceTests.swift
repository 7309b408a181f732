import Testing
@testable import GroupSyncCore

@Suite struct NotificationDebounceTests {
    @Test func firstPostGoesThrough() {
        #expect(NotificationDebounce.decide(lastPostedAtMillis: nil, minIntervalSeconds: 30, nowMillis: 1_000) == .post)
    }

    @Test func withinTheIntervalIsSuppressedAndAtItsEndGoesThrough() {
        let last: Int64 = 1_700_000_000_000
        #expect(NotificationDebounce.decide(lastPostedAtMillis: last, minIntervalSeconds: 30, nowMillis: last) == .suppress(untilMillis: last + 30_000))
        #expect(NotificationDebounce.decide(lastPostedAtMillis: last, minIntervalSeconds: 30, nowMillis: last + 29_999) == .suppress(untilMillis: last + 30_000))
        #expect(NotificationDebounce.decide(lastPostedAtMillis: last, minIntervalSeconds: 30, nowMillis: last + 30_000) == .post)
        #expect(NotificationDebounce.decide(lastPostedAtMillis: last, minIntervalSeconds: 0.5, nowMillis: last + 499) == .suppress(untilMillis: last + 500))
    }

    @Test func zeroIntervalNeverSuppresses() {
        #expect(NotificationDebounce.decide(lastPostedAtMillis: 5, minIntervalSeconds: 0, nowMillis: 5) == .post)
    }

    @Test func aLastPostSlightlyInTheFutureCountsAsRecentAFarOneAsABrokenClock() {
        let last: Int64 = 1_700_000_000_000
        #expect(NotificationDebounce.decide(lastPostedAtMillis: last, minIntervalSeconds: 30, nowMillis: last - 2_000) == .suppress(untilMillis: last + 30_000))
        #expect(NotificationDebounce.decide(lastPostedAtMillis: last, minIntervalSeconds: 30, nowMillis: last - 30_000) == .post)
        #expect(NotificationDebounce.decide(lastPostedAtMillis: .max, minIntervalSeconds: 30, nowMillis: .min) == .post)
    }

    @Test func postingIsDebouncedByTheStoredRecordEvenWhenDismissed() throws {
        let device = try DeviceID(bytes: Array(repeating: 1, count: 32))
        let request = try NotificationRequest(id: "shield", content: NotificationContent(title: "Blocked"))
        guard case .accepted(let first) = NotificationPosting.post(request, current: nil, device: device, nowMillis: 10_000) else {
            Issue.record("first post suppressed"); return
        }
        #expect(NotificationPosting.post(request, current: first, device: device, nowMillis: 20_000)
                == .suppressed(lastPostedAtMillis: 10_000, untilMillis: 40_000))
        guard case .accepted(let dismissed) = NotificationPosting.dismiss(current: first, device: device, nowMillis: 21_000) else {
            Issue.record("dismiss refused"); return
        }
        #expect(NotificationPosting.post(request, current: dismissed, device: device, nowMillis: 22_000)
                == .suppressed(lastPostedAtMillis: 10_000, untilMillis: 40_000))
        guard case .accepted(let second) = NotificationPosting.post(request, current: dismissed, device: device, nowMillis: 40_000) else {
            Issue.record("post after the interval suppressed"); return
        }
        #expect(second.stamp.generation == 2)
        #expect(!second.isDismissed)
    }
}
