import Testing
@testable import GroupSyncCore

@Suite struct HybridClockTests {
    @Test func ticksFollowPhysicalTimeAndNeverGoBack() {
        var clock = HybridClock()
        let a = clock.tick(physicalMillis: 1000)
        let b = clock.tick(physicalMillis: 1000)
        let c = clock.tick(physicalMillis: 900)  // the wall clock stepped back
        let d = clock.tick(physicalMillis: 2000)
        #expect(a == HLC(wallMillis: 1000, logical: 0))
        #expect(b == HLC(wallMillis: 1000, logical: 1))
        #expect(c == HLC(wallMillis: 1000, logical: 2))
        #expect(d == HLC(wallMillis: 2000, logical: 0))
    }

    @Test func observedRemoteTimeOrdersLaterLocalWrites() throws {
        var clock = HybridClock()
        _ = clock.tick(physicalMillis: 1000)
        try clock.observe(HLC(wallMillis: 1500, logical: 4), physicalMillis: 1000)
        #expect(clock.tick(physicalMillis: 1001) == HLC(wallMillis: 1500, logical: 5))
    }

    @Test func aRemoteClockFarAheadIsRefusedNotClamped() throws {
        var clock = HybridClock(maxForwardDriftMillis: 60_000)
        _ = clock.tick(physicalMillis: 1000)
        #expect(throws: ClockError.self) { try clock.observe(HLC(wallMillis: 61_001 + 1000, logical: 0), physicalMillis: 1000) }
        #expect(clock.last == HLC(wallMillis: 1000, logical: 0))  // unchanged by the refusal
        try clock.observe(HLC(wallMillis: 61_000, logical: 0), physicalMillis: 1000)  // exactly at the bound
        // Once our own clock catches up, the same timestamp is accepted.
        try clock.observe(HLC(wallMillis: 62_001, logical: 0), physicalMillis: 5000)
    }

    @Test func textFormParses() {
        #expect(HLC(parsing: "1795958497424.3") == HLC(wallMillis: 1_795_958_497_424, logical: 3))
        #expect(HLC(parsing: "abc") == nil)
        #expect(HLC(parsing: "1.2.3") == nil)
        #expect(HLC(parsing: "-5.0") == nil, "no time before 1970")
    }

    /// An observed time with the same wall time and a higher counter still orders later local writes after it.
    @Test func anObservedCounterAtTheSameWallTimeIsKept() throws {
        var clock = HybridClock(last: HLC(wallMillis: 100, logical: 0))
        try clock.observe(HLC(wallMillis: 100, logical: 5), physicalMillis: 100)
        #expect(clock.last == HLC(wallMillis: 100, logical: 5))
        #expect(clock.tick(physicalMillis: 100) > HLC(wallMillis: 100, logical: 5))
    }
}

/// The logical counter's overflow, found untested by a mutation run.
@Suite struct HybridClockOverflowTests {
    @Test func aFullLogicalCounterMovesTheWallTimeOnAndStaysAhead() {
        var clock = HybridClock(last: HLC(wallMillis: 1000, logical: .max))
        let next = clock.tick(physicalMillis: 1000)
        #expect(next == HLC(wallMillis: 1001, logical: 0))
        #expect(next > HLC(wallMillis: 1000, logical: .max))
    }
}
