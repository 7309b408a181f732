import Testing
@testable import GroupSyncDaemon

/// The control loop's wait for more writes before a commit (`TurnGathering`).
@Suite struct TurnGatheringTests {
    @Test func aTurnWaitsOnlyForTheClientsLastTurnAnswered() {
        var gathering = TurnGathering()
        gathering.committed(writers: [7, 8, 9])
        // Client 5, connected but not among last turn's writers, is not waited for: 7, 8, 9 ready is enough.
        #expect(gathering.keepsWaiting(ready: [7, 8], startMicros: 0, nowMicros: 10))
        #expect(!gathering.keepsWaiting(ready: [7, 8, 9], startMicros: 0, nowMicros: 10))
        #expect(!gathering.keepsWaiting(ready: [5, 7, 8, 9], startMicros: 0, nowMicros: 10))
    }

    @Test func theWaitEndsWithTheWindow() {
        var gathering = TurnGathering()
        gathering.committed(writers: [7, 8])
        #expect(gathering.keepsWaiting(ready: [7], startMicros: 1_000, nowMicros: 1_000 + TurnGathering.windowMicros - 1))
        #expect(!gathering.keepsWaiting(ready: [7], startMicros: 1_000, nowMicros: 1_000 + TurnGathering.windowMicros))
    }

    @Test func aLoneWriterNeverWaits() {
        var gathering = TurnGathering()
        #expect(!gathering.keepsWaiting(ready: [], startMicros: 0, nowMicros: 0))
        gathering.committed(writers: [7])
        #expect(!gathering.keepsWaiting(ready: [], startMicros: 0, nowMicros: 0))
    }

    @Test func aTurnWithoutWritesKeepsTheLastWritersAndAClosedClientIsForgotten() {
        var gathering = TurnGathering()
        gathering.committed(writers: [7, 8, 9])
        gathering.committed(writers: [])  // a turn of reads only
        #expect(gathering.lastWriters == [7, 8, 9])
        gathering.closed(9)
        #expect(!gathering.keepsWaiting(ready: [7, 8], startMicros: 0, nowMicros: 0))
        gathering.closed(8)
        #expect(!gathering.keepsWaiting(ready: [], startMicros: 0, nowMicros: 0))  // one writer left
    }
}
