import Testing
@testable import GroupSyncCore

@Suite struct SessionStatusTests {
    static let peer = try! DeviceID(bytes: Array(repeating: 7, count: 32))

    /// A session that ended before it learned anything keeps what the one before it knew; one that did learn
    /// replaces it.
    @Test func aSessionThatLearnedNothingKeepsWhatTheLastOneKnew() {
        let synced = SessionStatus(peer: Self.peer, peerName: "b", phase: .closed, negotiatedVersion: 2, lastSyncMillis: 1_000,
                                   clockOffsetMillis: 3, pendingCount: 4, pendingCountedAtHead: 50)
        let refused = SessionStatus(peer: Self.peer, peerName: nil, phase: .closed, negotiatedVersion: nil, lastSyncMillis: nil,
                                    clockOffsetMillis: nil, pendingCount: 0, pendingCountedAtHead: nil)
        let kept = refused.carryingOver(from: synced)
        #expect(kept.lastSyncMillis == 1_000 && kept.clockOffsetMillis == 3)
        #expect(kept.pendingChanges(head: 52) == 6, "counted on from the last count")
        #expect(refused.carryingOver(from: nil) == refused)
        var later = synced
        later.lastSyncMillis = 2_000
        later.pendingCount = 0
        later.pendingCountedAtHead = 60
        #expect(later.carryingOver(from: synced) == later)
    }
}
