import Testing
@testable import GroupSyncCore

/// `events_…` records keep the latest firing across devices: a peer's later-written but earlier time does not
/// replace a later one (the merge writes the later time back), and everything else merges as before.
@Suite struct LatestFiringTests {
    let key = "events_focus_intervalDidStart"
    let t0: Int64 = 1_700_000_000_000

    /// A store on device 1 holding `value` under `key`, written at `t0`.
    func store(holding value: Value?, suite: String = "group.test", key: String? = nil) -> MemoryReplicaStore {
        let store = MemoryReplicaStore(device: ReplicationFixtures.device(1), storeID: "s1")
        if let value { store.set(value, suite: suite, key: key ?? self.key, physicalMillis: t0) }
        return store
    }

    /// The same time on both sides is not written back: each write-back is newer, so two devices doing it
    /// would answer each other for ever (found untested by a mutation run).
    @Test func theSameTimeFromAPeerIsNotWrittenBack() {
        let b = store(holding: .double(Double(t0)))
        let same = ReplicationFixtures.entry(key, .double(Double(t0)), wall: t0 + 60_000, origin: 2)
        let result = b.apply([same], physicalMillis: t0 + 120_000)
        #expect(result.applied.count == 1 && result.kept.isEmpty)
        #expect(b.entry(suite: "group.test", key: key)?.version == same.version)
    }

    @Test func aPeersEarlierTimeWrittenLaterDoesNotReplaceALaterFiring() {
        let b = store(holding: .double(Double(t0)))
        // c reported the callback late (--at ten minutes before), a minute after b's firing.
        let late = ReplicationFixtures.entry(key, .double(Double(t0 - 600_000)), wall: t0 + 60_000, origin: 2)
        let result = b.apply([late], physicalMillis: t0 + 120_000)
        #expect(result.applied.count == 1 && result.kept.count == 1)
        let kept = b.entry(suite: "group.test", key: key)
        #expect(kept?.value == .double(Double(t0)) && kept?.version.origin == b.device)
        #expect(kept.map { $0.version > late.version } == true, "newer than the peer's, so every device ends on it")
        #expect(result.kept.first?.sequence == b.lastSequence())

        // The peer that wrote the earlier time takes the later one back.
        let c = MemoryReplicaStore(device: ReplicationFixtures.device(2), storeID: "s2")
        _ = c.apply([late], physicalMillis: t0 + 60_000)
        let back = c.apply(b.changes(after: 0, limit: 100).map(\.entry), physicalMillis: t0 + 130_000)
        #expect(back.kept.isEmpty && c.entry(suite: "group.test", key: key)?.value == .double(Double(t0)))
    }

    @Test func otherMergesAreLeftAlone() {
        let later = Double(t0 + 1_000)
        // A later time, a deletion, a value that is not a time: plain last-writer-wins.
        for incoming: Value? in [.double(later), nil, .string("reset")] {
            let b = store(holding: .double(Double(t0)))
            let result = b.apply([ReplicationFixtures.entry(key, incoming, wall: t0 + 60_000, origin: 2)], physicalMillis: t0 + 120_000)
            #expect(result.kept.isEmpty && b.entry(suite: "group.test", key: key)?.value == incoming, "\(String(describing: incoming))")
        }
        // Not a firing record: another key, or a device's local suite.
        for (suite, key) in [("group.test", "eventsfocus"), (LocalSuites.prefix + "x", key)] {
            let b = store(holding: .double(Double(t0)), suite: suite, key: key)
            let result = b.apply([ReplicationFixtures.entry(key, .double(1), wall: t0 + 60_000, origin: 2, suite: suite)], physicalMillis: t0 + 120_000)
            #expect(result.kept.isEmpty && b.entry(suite: suite, key: key)?.value == .double(1))
        }
        // Times as dates and whole numbers count too.
        let b = store(holding: .date(Double(t0) / 1000))
        #expect(b.apply([ReplicationFixtures.entry(key, .int(t0 - 5), wall: t0 + 60_000, origin: 2)], physicalMillis: t0 + 120_000).kept.count == 1)
    }

    /// A store's clock pushed ahead of its wall clock by a faster peer still writes the later time back (found
    /// by review: skipping it then let one fast clock in the group turn the rule off for everyone).
    @Test func theWriteBackHappensWhenTheClockRunsAhead() {
        let b = store(holding: .double(Double(t0)))
        let result = b.apply([ReplicationFixtures.entry(key, .double(1), wall: t0 + 60_000, origin: 2)], physicalMillis: t0 + 30_000)
        #expect(result.kept.count == 1 && b.entry(suite: "group.test", key: key)?.value == .double(Double(t0)))
        #expect(result.kept.first.map { $0.entry.version.hlc.wallMillis > t0 + 30_000 } == true, "ahead of the clock")
    }

    /// Through real sessions: the write back is sent to the peer that wrote the earlier time (it is not an
    /// echo of what that peer sent), and both end on the later firing.
    @Test func twoDevicesApartEndOnTheLaterFiring() {
        let net = ReplicationNetwork(now: t0)
        let b = net.addNode("b"), c = net.addNode("c")
        net.set(b, key, .double(Double(t0)))
        net.advance(to: t0 + 1_000)
        net.set(c, key, .double(Double(t0 - 600_000)))
        net.advance(to: t0 + 60_000)
        let link = net.connected(b, c)
        net.runUntilQuiet()
        #expect(link.isEstablished())
        #expect(ReplicationFixtures.converged([b, c]))
        #expect(c.store.entry(suite: "group.test", key: key)?.value == .double(Double(t0)))
    }
}
