import Foundation
import Testing
import GroupSyncCore
@testable import GroupSyncStore

/// The store decides which epoch its balance records are keyed by: its own store ID, or the legacy form
/// for a store made before epochs were part of the keys (it wrote those records, so it keeps extending them).
@Suite struct StoreBalanceEpochTests {
    static let me = try! DeviceID(bytes: Array(repeating: 1, count: 32))

    func earn(_ minutes: Int64, on store: Store) throws {
        try store.updateBalance(nowMillis: 1_773_144_000_000) { $0.earn(minutes * 60_000, reason: "") }
    }

    func earnedMinutes(_ store: Store) throws -> Int64 {
        try store.updateBalance(nowMillis: 1_773_144_000_000) { $0.summary.earnedMs } / 60_000
    }

    @Test func aStoreMovedAsideWritesBesideItsOldRecords() throws {
        let folder = TemporaryFolder()
        let first = try Store(path: folder.path + "/store.db", device: Self.me)
        #expect(first.balanceEpoch == first.storeID && !first.storeID.isEmpty)
        try earn(30, on: first)
        #expect(try first.liveEntries(suite: BalanceSuite.name).contains { $0.key == "earned.\(Self.me)@\(first.storeID)" })

        // Moved aside: a new, empty store for the same device, refilled from a peer that held everything.
        let second = try Store(path: folder.path + "/moved.db", device: Self.me)
        #expect(second.storeID != first.storeID && second.balanceEpoch == second.storeID)
        try earn(5, on: second)
        _ = try second.apply(try first.liveEntries(suite: BalanceSuite.name))
        #expect(try earnedMinutes(second) == 35, "the old store's 30 minutes were not replaced by the new store's 5")
        try earn(1, on: second)
        _ = try first.apply(try second.liveEntries(suite: BalanceSuite.name))
        #expect(try earnedMinutes(first) == 36)
    }

    @Test func aStoreMadeBeforeEpochsKeepsItsLegacyKeys() throws {
        let folder = TemporaryFolder()
        let path = folder.path + "/store.db"
        do {
            let store = try Store(path: path, device: Self.me)
            try store.database.execute("DELETE FROM meta WHERE name = 'balance_epoch_keys'")
        }
        let store = try Store(path: path, device: Self.me)
        #expect(store.balanceEpoch == nil)
        try earn(10, on: store)
        try earn(2, on: store)
        let keys = try store.liveEntries(suite: BalanceSuite.name).map(\.key)
        #expect(keys.contains("earned.\(Self.me)") && !keys.contains { $0.hasPrefix("earned.\(Self.me)@") })
        #expect(try earnedMinutes(store) == 12)
    }
}
