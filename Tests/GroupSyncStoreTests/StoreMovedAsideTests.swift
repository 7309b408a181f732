import Foundation
import GroupSyncCore
@testable import GroupSyncStore
import Testing

/// A store moved aside or removed while a process still holds it (found by review: with its write-ahead
/// log left behind, the next command made a new store that took that log for its own and came out damaged,
/// or with the old store's ID, and the moved file lacked the writes the log held).
@Suite struct StoreMovedAsideTests {
    @Test func aStoreGoneWithoutItsLogIsRefusedAndAllOfItMovedTogetherKeepsEveryWrite() throws {
        let folder = TemporaryFolder()
        let path = folder.path + "/store.db"
        let holder = try Store(path: path, device: StoreTests.me)  // keeps the log, as a running watch does
        for i in 0..<50 { try holder.set(.string("v\(i)"), suite: "s", key: "k\(i)") }
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        try FileManager.default.moveItem(atPath: path, toPath: folder.path + "/aside.db")
        #expect(!holder.isStillAtItsPath)

        #expect(throws: StoreError.self) { _ = try Store(path: path, device: StoreTests.me) }
        do { _ = try Store(path: path, device: StoreTests.me) } catch {
            #expect(error.description.contains("store.db-wal is still here"), "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: path), "nothing made in its place")

        // Moved together, the store keeps every acknowledged write; the home gets a new store.
        for suffix in ["-wal", "-shm"] { try FileManager.default.moveItem(atPath: path + suffix, toPath: folder.path + "/aside.db" + suffix) }
        let moved = try Store(path: folder.path + "/aside.db", device: StoreTests.me)
        #expect(try moved.lastSequence() == 50)
        #expect(try moved.entry(suite: "s", key: "k49")?.value == .string("v49"))
        #expect(moved.storeID == holder.storeID)
        let fresh = try Store(path: path, device: StoreTests.me)
        #expect(fresh.storeID != holder.storeID)
        #expect(try fresh.lastSequence() == 0)
        #expect(fresh.isStillAtItsPath)
    }

    /// A store left under construction by a power cut (its private name, `store.db.new-PID`, not yet linked
    /// into place) is not taken for the new store by a later process with the same process ID: the new store
    /// gets an ID of its own, and the leftover is left as it was (found by a crash-consistency review).
    @Test func aStoreLeftUnderConstructionIsNotTakenIntoPlace() throws {
        let folder = TemporaryFolder()
        let path = folder.path + "/store.db"
        let leftover = path + ".new-\(getpid())"
        let oldID: String
        do {
            let old = try Store(path: folder.path + "/old.db", device: StoreTests.me)
            try old.set(.string("from the old store"), suite: "s", key: "k")
            oldID = old.storeID
        }  // closed: its log checkpointed into the file
        try FileManager.default.moveItem(atPath: folder.path + "/old.db", toPath: leftover)

        let store = try Store(path: path, device: StoreTests.me)
        #expect(store.storeID != oldID)
        #expect(try store.entry(suite: "s", key: "k") == nil)
        #expect(FileManager.default.fileExists(atPath: leftover), "the leftover is the user's: not removed")
    }

    /// A shared-memory index left alone holds no data: SQLite rebuilds it, and a new store is made.
    @Test func aLeftoverIndexAloneDoesNotStopANewStore() throws {
        let folder = TemporaryFolder()
        let path = folder.path + "/store.db"
        _ = FileManager.default.createFile(atPath: path + "-shm", contents: Data(repeating: 0xAB, count: 32 * 1024))
        let store = try Store(path: path, device: StoreTests.me)
        try store.set(.int(1), suite: "s", key: "k")
        #expect(try store.entry(suite: "s", key: "k")?.value == .int(1))
    }

    @Test func aStoreReplacedUnderItsHolderIsNoLongerAtItsPath() throws {
        let folder = TemporaryFolder()
        let path = folder.path + "/store.db"
        let holder = try Store(path: path, device: StoreTests.me)
        #expect(holder.isStillAtItsPath)
        try FileManager.default.moveItem(atPath: path, toPath: folder.path + "/other.db")
        try FileManager.default.moveItem(atPath: folder.path + "/other.db", toPath: path)
        #expect(holder.isStillAtItsPath, "the same file moved back is the same store")
        let copy = folder.path + "/copy.db"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        _ = rename(copy, path)
        #expect(!holder.isStillAtItsPath, "a copy put in its place is another file")
        unlink(path)
        #expect(!holder.isStillAtItsPath)
    }
}
