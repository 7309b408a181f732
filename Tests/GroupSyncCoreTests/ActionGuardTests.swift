import Testing
@testable import GroupSyncCore

/// Every guard an action may carry, against an injected history and clock.
@Suite struct ActionGuardTests {
    let now: Double = 1_790_000_600_000
    let threshold = CallbackInvocation(activity: "focus", callback: .eventDidReachThreshold, event: "used-6.5")

    func skip(_ action: [String: Value], _ fired: [String: Double], _ invocation: CallbackInvocation? = nil) -> String? {
        ActionGuards(action: action).skipReason(for: invocation ?? threshold, now: now, history: FiredEventHistory(lastFired: fired))
    }

    @Test func neverTriggerBeforeHoldsBackAnEarlyCallback() {
        let end = CallbackInvocation(activity: "focus", callback: .intervalDidEnd, event: nil)
        #expect(skip(["neverTriggerBefore": .double(now + 60_000)], [:], end)?.hasPrefix("neverTriggerBefore") == true)
        #expect(skip(["neverTriggerBefore": .double(now)], [:], end) == nil)
        #expect(skip(["neverTriggerBefore": .int(Int64(now) - 1)], [:], end) == nil)
        #expect(skip(["neverTriggerBefore": .date((now + 5_000) / 1000)], [:], end) != nil, "a date works too")
    }

    @Test func alreadyTriggeredGuardsLookAtTheLastFiringBeforeThisOne() {
        let key = threshold.eventsKey
        #expect(skip(["skipIfAlreadyTriggeredAfter": .double(now - 10_000)], [key: now - 5_000]) != nil)
        #expect(skip(["skipIfAlreadyTriggeredAfter": .double(now - 10_000)], [key: now - 20_000]) == nil)
        #expect(skip(["skipIfAlreadyTriggeredAfter": .double(now - 10_000)], [:]) == nil, "never fired: runs")
        #expect(skip(["skipIfAlreadyTriggeredBefore": .double(now - 10_000)], [key: now - 20_000]) != nil)
        #expect(skip(["skipIfAlreadyTriggeredBefore": .double(now - 10_000)], [key: now - 5_000]) == nil)
        #expect(skip(["skipIfAlreadyTriggeredWithinMS": .int(30_000)], [key: now - 29_000]) != nil)
        #expect(skip(["skipIfAlreadyTriggeredWithinMS": .int(30_000)], [key: now - 31_000]) == nil)
        // Stamped after this run's time (`fire --at` in the past): within the window, and said so plainly.
        let later = skip(["skipIfAlreadyTriggeredWithinMS": .int(60_000)], [key: now + 3_600_000])
        #expect(later?.contains("later than this run's time") == true && later?.contains(" ago") != true, "\(later ?? "ran")")
        let window: [String: Value] = ["skipIfAlreadyTriggeredBetweenFromDate": .double(now - 60_000), "skipIfAlreadyTriggeredBetweenToDate": .double(now - 30_000)]
        #expect(skip(window, [key: now - 45_000]) != nil)
        #expect(skip(window, [key: now - 60_000]) != nil, "the window includes its ends")
        #expect(skip(window, [key: now - 10_000]) == nil)
        #expect(skip(["skipIfAlreadyTriggeredBetweenFromDate": .double(now - 60_000)], [key: now - 1]) != nil, "an open end")
    }

    @Test func largerEventGuardsCompareEventsByTheirMinutes() {
        let prefix = "events_focus_eventDidReachThreshold_"
        // used-7 is larger than used-6.5 (as numbers; as text "used-7" < "used-6.5" would be wrong).
        #expect(skip(["skipIfLargerEventRecordedAfter": .double(now - 60_000)], [prefix + "used-7": now - 1_000]) != nil)
        #expect(skip(["skipIfLargerEventRecordedAfter": .double(now - 60_000)], [prefix + "used-6.25": now - 1_000]) == nil)
        #expect(skip(["skipIfLargerEventRecordedAfter": .double(now - 60_000)], [prefix + "used-10": now - 90_000]) == nil, "too long ago")
        #expect(skip(["skipIfLargerEventRecordedAfter": .double(now - 60_000)], ["events_other_eventDidReachThreshold_used-9": now]) == nil,
                "another activity does not count")
        #expect(skip(["skipIfLargerEventRecordedWithinMS": .int(10_000)], [prefix + "used-8": now - 5_000]) != nil)
        #expect(skip(["skipIfLargerEventRecordedWithinMS": .int(10_000)], [prefix + "used-8": now - 15_000]) == nil)
        let sinceStart: [String: Value] = ["skipIfLargerEventRecordedSinceIntervalStarted": .bool(true)]
        #expect(skip(sinceStart, ["events_focus_intervalDidStart": now - 100_000, prefix + "used-7": now - 50_000]) != nil)
        #expect(skip(sinceStart, ["events_focus_intervalDidStart": now - 10_000, prefix + "used-7": now - 50_000]) == nil)
        #expect(EventOrder.isLarger("used-10", than: "used-9.75"))
        #expect(!EventOrder.isLarger("used-0.25", than: "used-0.5"))
        #expect(EventOrder.isLarger("b", than: "a"))
    }

    /// A guard that cannot be read stops its action (the runner reports it invalid) rather than reading as
    /// absent: `neverTriggerBefore` is the defence against an early `intervalDidEnd`, and a typo must not
    /// disarm it.
    @Test func aGuardOfTheWrongTypeIsAProblemNotAnAbsence() {
        #expect(ActionGuards.problem(in: ["neverTriggerBefore": .string("tomorrow")])?.hasPrefix("neverTriggerBefore") == true)
        #expect(ActionGuards.problem(in: ["skipIfAlreadyTriggeredWithinMS": .bool(true)]) != nil)
        #expect(ActionGuards.problem(in: ["skipIfLargerEventRecordedSinceIntervalStarted": .string("yes")]) != nil)
        #expect(ActionGuards.problem(in: ["neverTriggerBefore": .double(1e300)]) != nil, "beyond any real time")
        #expect(ActionGuards.problem(in: ["neverTriggerBefore": .double(now), "skipIfLargerEventRecordedSinceIntervalStarted": .bool(false)]) == nil)
    }

    /// Times from the suite are printed in the reasons: an absurd one (a damaged or hostile `events_` key)
    /// must not trap converting to whole numbers; it reads as never fired.
    @Test func anAbsurdFiredTimeDoesNotTrap() {
        let history = FiredEventHistory(values: [threshold.eventsKey: .double(1e300)])
        #expect(history.lastFired(threshold) == nil)
        #expect(ActionGuards(action: ["skipIfAlreadyTriggeredWithinMS": .double(60_000)])
            .skipReason(for: threshold, now: now, history: history) == nil)
    }
}
