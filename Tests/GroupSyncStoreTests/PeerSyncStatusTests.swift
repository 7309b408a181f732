import Foundation
import GroupSyncCore
@testable import GroupSyncStore
import Testing

/// A peer's last sync, clock offset and pending count outlive the daemon that learned them (found by review:
/// a restarted daemon showed nothing pending for a device that was away, with changes waiting for it).
@Suite struct PeerSyncStatusTests {
    static let third = try! DeviceID(bytes: Array(repeating: 3, count: 32))

    private func pairedStore(in folder: TemporaryFolder) throws -> Store {
        let store = try Store(path: folder.path + "/store.db", device: StoreTests.me)
        try store.pair(PairedDevice(id: StoreTests.other, name: "other", address: "127.0.0.1:1"))
        return store
    }

    @Test func aSavedStatusIsReadBackByAnotherConnectionAndCountsLaterWrites() throws {
        let folder = TemporaryFolder()
        let store = try pairedStore(in: folder)
        try store.set(.string("a"), suite: "s", key: "k")
        let head = try store.lastSequence()
        try store.saveSyncStatus(SessionStatus(rememberedFor: StoreTests.other, lastSyncMillis: 1_790_000_000_000, clockOffsetMillis: -12,
                                               pendingCount: 2, pendingCountedAtHead: head))
        try store.set(.string("b"), suite: "s", key: "k")

        // Another process's connection, as `status` without a daemon is.
        let reader = try Store(path: folder.path + "/store.db", device: StoreTests.me)
        let saved = try #require(try reader.savedSyncStatuses()[StoreTests.other])
        #expect(saved.lastSyncMillis == 1_790_000_000_000)
        #expect(saved.clockOffsetMillis == -12)
        #expect(saved.pendingChanges(head: try reader.lastSequence()) == 3, "two counted, one written since")
        #expect(!saved.isConnected)
    }

    /// Founding the balance waits until the store has caught up with every paired device once: a watermark
    /// (a first batch) is not enough. The record is read by other connections and dropped with the pairing.
    @Test func theBalanceIsFoundedOnlyOnceCaughtUpWithEveryPeer() throws {
        let folder = TemporaryFolder()
        let store = try pairedStore(in: folder)  // `me` has the smaller ID: the device that founds
        try store.setWatermark(Watermark(storeID: "other-store", sequence: 3), peer: StoreTests.other)
        func founder() throws -> Bool {
            try store.updateBalance(nowMillis: 1_700_000_000_000) { book in
                book.register()
                return book.ledger.members.values.contains(where: \.founder)
            }
        }
        #expect(try !founder(), "a watermark alone: not caught up")
        try store.recordCaughtUp(peer: StoreTests.other)
        let other = try Store(path: folder.path + "/store.db", device: StoreTests.me)
        #expect(try other.hasCaughtUp(peer: StoreTests.other))
        #expect(try founder())
        #expect(try store.unpair(StoreTests.other))
        #expect(try !store.hasCaughtUp(peer: StoreTests.other), "forgotten with the pairing")
    }

    @Test func aStatusWithNothingLearnedStaysUnknown() throws {
        let folder = TemporaryFolder()
        let store = try pairedStore(in: folder)
        try store.saveSyncStatus(SessionStatus(rememberedFor: StoreTests.other, lastSyncMillis: nil, clockOffsetMillis: nil,
                                               pendingCount: 0, pendingCountedAtHead: nil))
        let saved = try #require(try store.savedSyncStatuses()[StoreTests.other])
        #expect(saved.lastSyncMillis == nil && saved.clockOffsetMillis == nil)
        #expect(saved.pendingChanges(head: 10) == nil, "never counted: no count, not 0")
        // What status shows for it, and for a peer no session ever ran with: every position, none acknowledged.
        #expect(SessionStatus.pending(saved, head: 10) == 10 && SessionStatus.pending(nil, head: 7) == 7)
    }

    @Test func anUnpairedDeviceKeepsNoStatusAndStartsAfreshWhenPairedAgain() throws {
        let folder = TemporaryFolder()
        let store = try pairedStore(in: folder)
        let status = SessionStatus(rememberedFor: StoreTests.other, lastSyncMillis: 5, clockOffsetMillis: 0, pendingCount: 1, pendingCountedAtHead: 0)
        try store.saveSyncStatus(status)
        #expect(try store.unpair(StoreTests.other))
        #expect(try store.savedSyncStatuses().isEmpty)

        // A session that ends after its device was removed saves nothing.
        try store.saveSyncStatus(status)
        try store.saveSyncStatus(SessionStatus(rememberedFor: Self.third, lastSyncMillis: 5, clockOffsetMillis: 0, pendingCount: 1, pendingCountedAtHead: 0))
        try store.pair(PairedDevice(id: StoreTests.other, name: "other", address: "127.0.0.1:1"))
        #expect(try store.savedSyncStatuses().isEmpty)
        let rows = try store.database.prepare("SELECT count(*) FROM meta WHERE name LIKE 'peer_status:%'")
        #expect(try rows.step() && rows.int64(0) == 0, "no row kept for a device not paired")
    }

    @Test func anUnreadableStatusIsLeftOutAndTheOthersAreRead() throws {
        let folder = TemporaryFolder()
        let store = try pairedStore(in: folder)
        try store.pair(PairedDevice(id: Self.third, name: "third", address: "127.0.0.1:2"))
        try store.saveSyncStatus(SessionStatus(rememberedFor: Self.third, lastSyncMillis: 7, clockOffsetMillis: 1, pendingCount: 0, pendingCountedAtHead: 4))
        for damaged in ["not json", #"{"pendingCount":-1}"#, #"{"lastSyncMillis":3}"#] {
            try store.database.execute("INSERT OR REPLACE INTO meta(name, value) VALUES ('peer_status:\(StoreTests.other)', '\(damaged)')")
            let saved = try store.savedSyncStatuses()
            #expect(saved[StoreTests.other] == nil, "\(damaged)")
            #expect(saved[Self.third]?.lastSyncMillis == 7)
        }
    }
}
