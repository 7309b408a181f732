import Glibc
import GroupSyncStore
import Testing
@testable import GroupSyncDaemon

/// The waits the daemon's threads sleep in.
@Suite struct ConditionTests {
    /// A deadline that is a time of day is waited for on the wall clock, until the clock reads it. (What that
    /// buys, a wait that ends on time across a suspend or a clock step, is the kernel's; a test cannot suspend
    /// the machine.)
    @Test func aWallClockWaitEndsWhenTheClockReadsTheDeadline() {
        let condition = Condition.onWallClock()
        let deadline = WallClock.nowMillis() + 150
        condition.locked { condition.wait(untilMillis: deadline) }
        let now = WallClock.nowMillis()
        #expect(now >= deadline && now < deadline + 5_000, "woke at \(now - deadline) ms from the deadline")
        // A deadline already past returns at once.
        let before = WallClock.nowMillis()
        condition.locked { condition.wait(untilMillis: before - 60_000) }
        #expect(WallClock.nowMillis() - before < 1_000)
    }

    @Test func aMonotonicWaitLastsItsSpan() {
        let condition = Condition()
        let start = monotonicMillis()
        condition.locked { condition.wait(millis: 120) }
        let waited = monotonicMillis() - start
        #expect(waited >= 120 && waited < 5_000, "\(waited) ms")
    }
}
