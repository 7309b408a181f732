import Testing
@testable import GroupSyncCore

/// Block lists are derived once changes pause, not after every batch of a catch-up, and never wait forever.
@Suite struct BlockListScheduleTests {
    @Test func derivedOnceChangesPause() {
        var schedule = BlockListSchedule()
        #expect(schedule.dueAt == nil, "nothing waits: no timer")
        schedule.changed(["a"], nowMillis: 1_000)
        schedule.changed(["b"], nowMillis: 1_100)  // the next batch of a catch-up
        #expect(schedule.takeDue(nowMillis: 1_100 + BlockListSchedule.quietMillis - 1).isEmpty, "still changing")
        #expect(schedule.dueAt == 1_100 + BlockListSchedule.quietMillis)
        #expect(schedule.takeDue(nowMillis: 1_100 + BlockListSchedule.quietMillis) == ["a", "b"])
        #expect(schedule.dueAt == nil && schedule.takeDue(nowMillis: 9_999).isEmpty, "taken: nothing waits")
        schedule.changed([], nowMillis: 10_000)
        #expect(schedule.dueAt == nil, "no suite, no timer")
    }

    @Test func aStreamThatNeverPausesIsStillDerived() {
        var schedule = BlockListSchedule()
        var now: Int64 = 0
        while now < 100_000 {
            schedule.changed(["s"], nowMillis: now)
            if !schedule.takeDue(nowMillis: now).isEmpty { break }
            now += 100
        }
        #expect(now == BlockListSchedule.maxWaitMillis, "derived after \(now) ms of changes every 100 ms")
    }
}
