import Foundation
import GroupSyncCore
@testable import GroupSyncStore
import Testing

/// Stores written by an earlier groupsync open in place, everything in them kept, and come out at a version
/// an earlier groupsync refuses (found by review: a store from before `send_horizons` was refused as
/// "damaged", and an earlier groupsync misread the balance of a store this one had written).
@Suite struct StoreSchemaTests {
    /// What a store made before send horizons and epoch-keyed balance records looks like: the four tables of
    /// version 1 and no `balance_epoch_keys` mark.
    @Test func aStoreFromBeforeSendHorizonsIsMigratedWithEverythingInIt() throws {
        let folder = TemporaryFolder()
        let path = folder.path + "/store.db"
        let storeID = try writeVersion1Store(at: path) { database in
            try database.execute("DROP TABLE send_horizons; DELETE FROM meta WHERE name = 'balance_epoch_keys'")
        }

        let store = try Store(path: path, device: StoreTests.me)
        try expectEverythingKept(in: store, storeID: storeID)
        #expect(store.balanceEpoch == nil, "its balance records stay its legacy epoch")
        #expect(try store.sendHorizon(peer: StoreTests.other) == nil, "no horizon yet: the next session resends everything")
        try store.setSendHorizon(9, peer: StoreTests.other)
        #expect(try store.sendHorizon(peer: StoreTests.other) == 9)
        #expect(try StoreSchema.userVersion(store.database) == StoreSchema.version)
    }

    /// The version-1 store the previous groupsync made: every table, the epoch mark and horizons, all kept.
    @Test func aVersion1StoreWithHorizonsKeepsThemAndItsEpochKeys() throws {
        let folder = TemporaryFolder()
        let path = folder.path + "/store.db"
        let storeID = try writeVersion1Store(at: path) { _ in }

        let store = try Store(path: path, device: StoreTests.me)
        try expectEverythingKept(in: store, storeID: storeID)
        #expect(store.balanceEpoch == storeID)
        #expect(try store.sendHorizon(peer: StoreTests.other) == 4)
        #expect(try StoreSchema.userVersion(store.database) == 2)
    }

    /// A version-1 file that lacks one of the four tables is not a store from an earlier groupsync.
    @Test func aVersion1FileWithoutTheStoresTablesIsRefusedAndLeftAlone() throws {
        let folder = TemporaryFolder()
        let path = folder.path + "/store.db"
        _ = try writeVersion1Store(at: path) { database in try database.execute("DROP TABLE watermarks") }
        #expect(throws: StoreError.self) { try Store(path: path, device: StoreTests.me) }
        let database = try SQLiteDatabase(path: path)
        #expect(try StoreSchema.userVersion(database) == 1)
    }

    // MARK: Helpers

    /// A store with a value, a tombstone, a watermark and a send horizon, then turned back into a version-1
    /// file by `downgrade`; its store ID.
    fileprivate func writeVersion1Store(at path: String, downgrade: (SQLiteDatabase) throws -> Void) throws -> String {
        let storeID: String
        do {
            let store = try Store(path: path, device: StoreTests.me)
            storeID = store.storeID
            try store.set(.string("kept"), suite: "group.app", key: "value")
            try store.set(.int(1), suite: "group.app", key: "gone")
            try store.delete(suite: "group.app", key: "gone")
            try store.setWatermark(Watermark(storeID: "0123456789abcdef0123456789abcdef", sequence: 7), peer: StoreTests.other)
            try store.setSendHorizon(4, peer: StoreTests.other)
            try downgrade(store.database)
            try store.database.execute("PRAGMA user_version = 1")
        }
        return storeID
    }

    fileprivate func expectEverythingKept(in store: Store, storeID: String) throws {
        #expect(store.storeID == storeID)
        #expect(try store.entry(suite: "group.app", key: "value")?.value == .string("kept"))
        let tombstone = try #require(try store.entry(suite: "group.app", key: "gone"))
        #expect(tombstone.value == nil)
        #expect(try store.watermark(peer: StoreTests.other) == Watermark(storeID: "0123456789abcdef0123456789abcdef", sequence: 7))
        #expect(try store.lastSequence() == 3)
    }
}

extension StoreSchemaTests {
    /// Beside an earlier daemon still running on it, a process of this groupsync works on a version-1 store
    /// without raising its version (the daemon would refuse every new connection); the next open that may
    /// raise it does.
    @Test func aStoreOpenedWithoutRaisingItsVersionStaysReadableByEarlierGroupsyncs() throws {
        let folder = TemporaryFolder()
        let path = folder.path + "/store.db"
        let storeID = try writeVersion1Store(at: path) { database in
            try database.execute("DROP TABLE send_horizons; DELETE FROM meta WHERE name = 'balance_epoch_keys'")
        }
        do {
            let beside = try Store(path: path, device: StoreTests.me, raisingSchemaVersion: false)
            #expect(beside.schemaVersion == 1 && beside.isOnAnEarlierSchema)
            try expectEverythingKept(in: beside, storeID: storeID)
            try beside.set(.string("written beside"), suite: "group.app", key: "later")
            try beside.setSendHorizon(5, peer: StoreTests.other)
            #expect(try StoreSchema.userVersion(beside.database) == 1)
        }
        let raised = try Store(path: path, device: StoreTests.me)
        #expect(raised.schemaVersion == StoreSchema.version && !raised.isOnAnEarlierSchema)
        #expect(try raised.entry(suite: "group.app", key: "later")?.value == .string("written beside"))
        #expect(try raised.sendHorizon(peer: StoreTests.other) == 5)
        #expect(try StoreSchema.userVersion(raised.database) == 2)
    }
}
