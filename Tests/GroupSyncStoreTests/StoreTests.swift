import Foundation
import Testing
import GroupSyncCore
@testable import GroupSyncStore

@Suite struct StoreTests {
    static let me = try! DeviceID(bytes: Array(repeating: 1, count: 32))
    static let other = try! DeviceID(bytes: Array(repeating: 2, count: 32))

    /// A clock the test moves by hand.
    final class ManualClock: @unchecked Sendable {
        var millis: Int64 = 1_000_000
        var function: @Sendable () -> Int64 { { self.millis } }
    }

    @Test func everyTypeSurvivesTheFile() throws {
        let folder = TemporaryFolder()
        let values: [String: Value] = [
            "s": .string("héllo"), "i": .int(-5), "d": .double(0.25), "d7": .double(7.0), "b": .bool(true),
            "t": .date(1_795_958_100.25), "x": .data([0, 1, 255]),
            "a": .array([.dictionary(["type": .string("blockSelection"), "n": .int(3)])]),
        ]
        do {
            let store = try Store(path: folder.path + "/store.db", device: Self.me)
            for (key, value) in values { try store.set(value, suite: "group.test", key: key) }
        }
        let reopened = try Store(path: folder.path + "/store.db", device: Self.me)
        for (key, value) in values {
            #expect(try reopened.entry(suite: "group.test", key: key)?.value == value)
        }
        #expect(try reopened.liveEntries(suite: "group.test").map(\.key) == values.keys.sorted())
        #expect(try reopened.integrityCheck() == ["ok"])
    }

    /// How the daemon finds what it reacts to inside a catch-up: keys of its suites, and keys with a prefix in any suite.
    @Test func changedKeysAreThoseOfTheSuitesOrWithThePrefixAfterTheCursor() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path + "/store.db", device: Self.me)
        try store.set(.int(1), suite: "watched", key: "old")
        try store.set(.int(1), suite: "app", key: "groupsync.block.old")
        let cursor = try store.lastSequence()
        for (suite, key) in [("watched", "a"), ("app", "groupsync.block.x"), ("app", "groupsync.blockade"), ("app", "groupsync.block"), ("app", "other"),
                             ("app2", "groupsync.block."), ("app3", "groupsync.block.y"), ("app", "groupsync.block.z")] {
            try store.set(.bool(true), suite: suite, key: key)
        }
        let head = try store.lastSequence()
        #expect(try store.changedKeys(after: cursor, through: head, inSuites: ["watched"]).map(\.key) == ["a"])
        let expected = ["app/groupsync.block.x", "app/other", "app2/groupsync.block.", "app3/groupsync.block.y", "app/groupsync.block.z"]
        let blocks = try store.changedKeys(after: cursor, through: head, withKeyPrefixes: ["groupsync.block.", "other"]).map { "\($0.suite)/\($0.key)" }
        #expect(blocks == expected, "in the order they changed")
        #expect(try store.changedKeys(after: head - 1, through: head, withKeyPrefixes: ["groupsync.block."]).map(\.key) == ["groupsync.block.z"])
        #expect(try store.changedKeys(after: head, through: head, withKeyPrefixes: ["groupsync.block."]).isEmpty)
        // Past a few hundred changes it hops from suite to suite instead: the same answer.
        for i in 0..<Int(Store.changesReadInFull) { try store.set(.int(Int64(i)), suite: "filler", key: "k\(i)") }
        let hopped = try store.changedKeys(after: cursor, through: try store.lastSequence(), withKeyPrefixes: ["groupsync.block.", "other"]).map { "\($0.suite)/\($0.key)" }
        #expect(hopped == expected)
    }

    @Test func deleteWritesATombstoneThatReplicates() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path + "/store.db", device: Self.me)
        try store.set(.int(1), suite: "s", key: "k")
        let tombstone = try #require(try store.delete(suite: "s", key: "k"))
        #expect(tombstone.entry.isDeleted)
        #expect(try store.delete(suite: "s", key: "k") == nil)  // nothing live to delete
        #expect(try store.entry(suite: "s", key: "k")?.isDeleted == true)
        #expect(try store.liveEntries(suite: "s").isEmpty)
        #expect(try store.changes(after: 0).map(\.entry.isDeleted) == [true])  // history keeps the tombstone
    }

    /// A local write is committed, then watchers are signalled, then the log is synced (`Store.write`): the
    /// signal must find the write readable from any other connection, and the connection must go back to
    /// synced commits for whatever it does next.
    @Test func watchersAreSignalledWhenTheWriteIsReadableAndLaterCommitsStaySynced() throws {
        let folder = TemporaryFolder()
        let writer = try Store(path: folder.path + "/store.db", device: Self.me)
        let watcher = try Store(path: folder.path + "/store.db", device: Self.me)
        var seenAtSignal: [Value?] = []
        writer.didCommit = { seenAtSignal.append(try? watcher.entry(suite: "s", key: "k")?.value) }
        try writer.set(.int(1), suite: "s", key: "k")
        try writer.set(.int(2), suite: "s", key: "k")
        #expect(seenAtSignal == [.int(1), .int(2)])
        let mode = try writer.database.prepare("PRAGMA synchronous")
        #expect(try mode.step())
        #expect(mode.int64(0) == 2)  // FULL
    }

    /// A write ticked on a wall time ahead of the device's clock (here: a peer's clock was ahead) is synced
    /// before it becomes visible: if a power cut took it, with the clock's state, the same version could be
    /// ticked again for another write. A write on the device's own clock time becomes visible first.
    @Test func aWriteAheadOfTheDevicesClockIsSyncedBeforeItIsVisible() throws {
        let folder = TemporaryFolder()
        let clock = ManualClock()
        let store = try Store(path: folder.path + "/store.db", device: Self.me, physicalClock: clock.function)
        try store.set(.int(1), suite: "s", key: "k")
        #expect(!store.lastWriteWasSyncedBeforeVisible)
        let ahead = Entry(suite: "s", key: "other", value: .int(2), version: Version(hlc: HLC(wallMillis: clock.millis + 60_000), origin: Self.other))
        _ = try store.apply([ahead])
        let local = try store.set(.int(3), suite: "s", key: "k")
        #expect(local.entry.version.hlc.wallMillis == clock.millis + 60_000)
        #expect(store.lastWriteWasSyncedBeforeVisible)
        clock.millis += 60_001  // the device's clock catches up
        try store.set(.int(4), suite: "s", key: "k")
        #expect(!store.lastWriteWasSyncedBeforeVisible)
        #expect(try store.entry(suite: "s", key: "k")?.value == .int(4))
        let mode = try store.database.prepare("PRAGMA synchronous")
        #expect(try mode.step() && mode.int64(0) == 2)  // FULL again after either kind
    }

    @Test func clockIsMonotonicAcrossConnectionsToTheSameFile() throws {
        let folder = TemporaryFolder()
        let clock = ManualClock()
        let a = try Store(path: folder.path + "/store.db", device: Self.me, physicalClock: clock.function)
        let b = try Store(path: folder.path + "/store.db", device: Self.me, physicalClock: clock.function)
        let first = try a.set(.int(1), suite: "s", key: "k")
        let second = try b.set(.int(2), suite: "s", key: "k")  // same millisecond, other connection
        #expect(second.entry.version > first.entry.version)
        #expect(second.sequence == first.sequence + 1)
        #expect(try a.entry(suite: "s", key: "k")?.value == .int(2))
    }

    @Test func remoteEntriesMergeByLastWriterWins() throws {
        let folder = TemporaryFolder()
        let clock = ManualClock()
        let store = try Store(path: folder.path + "/store.db", device: Self.me, physicalClock: clock.function)
        try store.set(.string("mine"), suite: "s", key: "k")
        let older = Entry(suite: "s", key: "k", value: .string("old"), version: Version(hlc: HLC(wallMillis: 1), origin: Self.other))
        let newer = Entry(suite: "s", key: "k", value: .string("theirs"), version: Version(hlc: HLC(wallMillis: clock.millis + 10), origin: Self.other))
        var result = try store.apply([older])
        #expect(result.applied.isEmpty && result.superseded == 1)
        result = try store.apply([newer, newer])
        #expect(result.applied.count == 1 && result.superseded == 1)
        #expect(try store.entry(suite: "s", key: "k")?.value == .string("theirs"))
        // A later local write orders after the remote one even though our wall clock is behind it.
        let local = try store.set(.string("again"), suite: "s", key: "k")
        #expect(local.entry.version.hlc > newer.version.hlc)
    }

    @Test func entriesFromAClockFarAheadAreRefusedAndChangeNothing() throws {
        let folder = TemporaryFolder()
        let clock = ManualClock()
        let store = try Store(path: folder.path + "/store.db", device: Self.me, physicalClock: clock.function, maxForwardDriftMillis: 60_000)
        let future = Entry(suite: "s", key: "k", value: .int(9), version: Version(hlc: HLC(wallMillis: clock.millis + 3_600_000), origin: Self.other))
        let result = try store.apply([future])
        #expect(result.refused.count == 1 && result.applied.isEmpty)
        #expect(try store.entry(suite: "s", key: "k") == nil)
        #expect(try store.currentClock().wallMillis < clock.millis + 1)
        clock.millis += 3_600_000
        #expect(try store.apply([future]).applied.count == 1)
    }

    @Test func badNamesAndValuesAreRefusedAndWriteNothing() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path + "/store.db", device: Self.me)
        #expect(throws: StoreError.self) { try store.set(.int(1), suite: "", key: "k") }
        #expect(throws: StoreError.self) { try store.set(.int(1), suite: "s", key: "a\nb") }
        #expect(throws: StoreError.self) { try store.set(.double(.nan), suite: "s", key: "k") }
        #expect(throws: StoreError.self) { try store.set(.data(Array(repeating: 0, count: Store.maxValueBytes + 1)), suite: "s", key: "k") }
        #expect(try store.lastSequence() == 0)
    }

    /// A peer's entries get the limit a local write gets: a value over 1 MiB is refused, and so is the rest
    /// of its batch (one transaction), or this store would hold what it could not forward in a frame.
    @Test func aPeersValueOverTheLimitIsRefusedWithItsBatch() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path + "/store.db", device: Self.me)
        let version = Version(hlc: HLC(wallMillis: 1_000), origin: Self.other)
        let fine = Entry(suite: "s", key: "fine", value: .int(1), version: version)
        let big = Entry(suite: "s", key: "big", value: .string(String(repeating: "x", count: Store.maxValueBytes)), version: version)
        #expect(throws: StoreError.self) { try store.apply([fine, big]) }
        #expect(try store.lastSequence() == 0)
        #expect(try store.entry(suite: "s", key: "fine") == nil)
        #expect(try store.apply([fine]).applied.count == 1)
    }

    /// A peer's entry no store may keep (an earlier groupsync's looser rules let it be written) is left out
    /// and reported, and the rest of its batch is merged with the watermark: refusing the batch would stop
    /// everything the peer wrote after it, for good.
    @Test func aPeersUnstorableEntriesAreLeftOutAndTheRestOfTheBatchIsMerged() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path + "/store.db", device: Self.me)
        let version = Version(hlc: HLC(wallMillis: 1_000), origin: Self.other)
        let fine = Entry(suite: "s", key: "fine", value: .int(1), version: version)
        let unstorable = [
            Entry(suite: "s", key: "year10000", value: .date(253_402_300_799.9996), version: version),
            Entry(suite: "s", key: "infinite", value: .array([.double(.infinity)]), version: version),
            Entry(suite: "s", key: "a\nb", value: .int(1), version: version),
            Entry(suite: "", key: "k", value: nil, version: version),
        ]
        let watermark = PeerWatermark(Watermark(storeID: "peer-store", sequence: 9), peer: Self.other)
        let result = try store.apply([unstorable[0], fine] + unstorable.dropFirst(), physicalMillis: 2_000, savingWatermark: watermark)
        #expect(result.applied.map(\.entry) == [fine])
        #expect(result.unstorable.map(\.entry) == unstorable)
        #expect(result.unstorable[0].problem.contains("date outside years 0000-9999"))
        #expect(result.unstorable[2].problem.contains("control character"))
        #expect(try store.lastSequence() == 1)
        #expect(try store.entry(suite: "s", key: "year10000") == nil)
        #expect(try store.watermark(peer: Self.other) == watermark.watermark, "the watermark moves past what was left out")
    }

    @Test func changesAreReadInSequenceFromAnyPoint() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path + "/store.db", device: Self.me)
        for i in 0..<10 { try store.set(.int(Int64(i)), suite: "s", key: "k\(i % 4)") }
        let all = try store.changes(after: 0)
        #expect(all.count == 4)  // one row per key: the history keeps each key's latest change
        #expect(all.map(\.sequence) == all.map(\.sequence).sorted())
        #expect(try store.changes(after: 8).map(\.entry.key) == ["k0", "k1"])
        #expect(try store.changes(after: 0, limit: 2).count == 2)
    }

    @Test func aBatchCommitsTogetherAndABadWriteRefusesIt() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path + "/store.db", device: Self.me)
        try store.set(.int(0), suite: "s", key: "gone")
        let changes = try store.write([
            .set(suite: "s", key: "a", value: .int(1)), .delete(suite: "s", key: "gone"),
            .delete(suite: "s", key: "never"), .set(suite: "s", key: "a", value: .int(2)),
        ])
        #expect(changes.map { $0?.sequence } == [2, 3, nil, 4])
        #expect(changes[3]!.entry.version > changes[0]!.entry.version)
        #expect(try store.entry(suite: "s", key: "a")?.value == .int(2))
        #expect(try store.lastSequence() == 4)
        #expect(throws: StoreError.self) {
            try store.write([.set(suite: "s", key: "b", value: .int(1)), .set(suite: "s", key: "", value: .int(1))])
        }
        #expect(try store.entry(suite: "s", key: "b") == nil)
        #expect(try store.lastSequence() == 4)
    }

    @Test func watermarksPersist() throws {
        let folder = TemporaryFolder()
        do {
            let store = try Store(path: folder.path + "/store.db", device: Self.me)
            #expect(try store.watermark(peer: Self.other) == nil)
            try store.setWatermark(Watermark(storeID: "abc", sequence: 42), peer: Self.other)
        }
        let store = try Store(path: folder.path + "/store.db", device: Self.me)
        #expect(try store.watermark(peer: Self.other) == Watermark(storeID: "abc", sequence: 42))
        #expect(store.storeID.count == 32)
    }

    /// A batch and the watermark it reaches are one transaction; a batch with a refused entry leaves the
    /// watermark to the session (it must stop before that entry), and an empty batch still saves it.
    @Test func applySavesTheWatermarkWithTheEntriesUnlessOneIsRefused() throws {
        let folder = TemporaryFolder()
        let clock = ManualClock()
        let store = try Store(path: folder.path + "/store.db", device: Self.me, physicalClock: clock.function, maxForwardDriftMillis: 60_000)
        let entry = Entry(suite: "s", key: "k", value: .int(1), version: Version(hlc: HLC(wallMillis: clock.millis), origin: Self.other))
        let future = Entry(suite: "s", key: "f", value: .int(2), version: Version(hlc: HLC(wallMillis: clock.millis + 3_600_000), origin: Self.other))
        let reached = PeerWatermark(Watermark(storeID: "theirs", sequence: 5), peer: Self.other)

        _ = try store.apply([entry], physicalMillis: clock.millis, savingWatermark: reached)
        #expect(try store.watermark(peer: Self.other) == reached.watermark)

        let further = PeerWatermark(Watermark(storeID: "theirs", sequence: 9), peer: Self.other)
        let result = try store.apply([future], physicalMillis: clock.millis, savingWatermark: further)
        #expect(result.refused.count == 1)
        #expect(try store.watermark(peer: Self.other) == reached.watermark, "a refused entry leaves the watermark to the caller")

        _ = try store.apply([], physicalMillis: clock.millis, savingWatermark: further)
        #expect(try store.watermark(peer: Self.other) == further.watermark)
    }

    /// A daemon's session merges a peer's batch only while the peer is paired, checked in the merge's own
    /// transaction: a batch merged after `peer remove` returned landed all the same (found by review).
    @Test func aBatchFromAPeerRemovedMeanwhileIsNotMerged() throws {
        let folder = TemporaryFolder()
        let clock = ManualClock()
        let store = try Store(path: folder.path + "/store.db", device: Self.me, physicalClock: clock.function)
        store.mergesOnlyFromPairedPeers = true
        try store.pair(PairedDevice(id: Self.other, name: "other", address: "127.0.0.1:1"))
        func entry(_ key: String) -> Entry { Entry(suite: "s", key: key, value: .int(1), version: Version(hlc: HLC(wallMillis: clock.millis), origin: Self.other)) }
        let reached = PeerWatermark(Watermark(storeID: "theirs", sequence: 5), peer: Self.other)
        _ = try store.apply([entry("before")], physicalMillis: clock.millis, savingWatermark: reached)
        #expect(try store.entry(suite: "s", key: "before") != nil)

        // Removed by another connection (the `peer remove` command's).
        let command = try Store(path: folder.path + "/store.db", device: Self.me, physicalClock: clock.function)
        #expect(try command.unpair(Self.other))
        let further = PeerWatermark(Watermark(storeID: "theirs", sequence: 9), peer: Self.other)
        #expect(throws: StoreError.peerNoLongerPaired(Self.other.short)) {
            try store.apply([entry("after")], physicalMillis: clock.millis, savingWatermark: further)
        }
        #expect(throws: StoreError.peerNoLongerPaired(Self.other.short)) {
            try store.apply([], physicalMillis: clock.millis, savingWatermark: further)
        }
        #expect(try store.entry(suite: "s", key: "after") == nil)
        #expect(try store.watermark(peer: Self.other) == reached.watermark, "not moved by the refused batches")
    }

    @Test func theHeadAndThePairingVersionAreReadTogether() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path + "/store.db", device: Self.me)
        #expect(try store.headAndPairingVersion() == (lastSequence: 0, pairingVersion: 0))
        try store.set(.int(1), suite: "s", key: "a")
        try store.set(.int(2), suite: "s", key: "b")
        try store.pair(PairedDevice(id: Self.other, name: "other", address: "127.0.0.1:1"))
        let both = try store.headAndPairingVersion()
        #expect(both.lastSequence == (try store.lastSequence()) && both.lastSequence == 2)
        #expect(both.pairingVersion == (try store.pairingVersion()) && both.pairingVersion > 0)
    }

    @Test func aFileThatIsNotADatabaseIsReportedNotReset() throws {
        let folder = TemporaryFolder()
        let path = folder.path + "/store.db"
        try Data("this is not a database, but it is somebody's file".utf8 + [UInt8](repeating: 7, count: 5000)).write(to: URL(fileURLWithPath: path))
        #expect(throws: StoreError.self) { try Store(path: path, device: Self.me) }
        let after = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(after.prefix(10) == Data("this is no".utf8))
    }

    /// The daemon's start-up look for notification requests: every suite, only keys with the prefix, only live ones.
    @Test func entriesByKeyPrefixSpanSuitesAndMatchThePrefixOnly() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path + "/store.db", device: Self.me)
        for (suite, key) in [("group.a", "groupsync.notification.x"), ("group.b", "groupsync.notification.y"), ("group.b", "groupsync.notification.z"),
                             ("group.a", "groupsync.notification"), ("group.a", "groupsync.notification/x"), ("group.a", "groupsync.notifications.removeAllDeliveredAt")] {
            _ = try store.set(.string("v"), suite: suite, key: key)
        }
        _ = try store.delete(suite: "group.b", key: "groupsync.notification.z")
        let found = try store.liveEntries(keyPrefix: "groupsync.notification.").map { "\($0.suite) \($0.key)" }
        #expect(found == ["group.a groupsync.notification.x", "group.b groupsync.notification.y"])
    }
}
