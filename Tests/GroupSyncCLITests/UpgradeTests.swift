import Foundation
import Glibc
import GroupSyncCore
@testable import GroupSyncStore
import Testing

/// Installing a new groupsync while the earlier one's daemon keeps running (found by review with earlier
/// builds: the new CLI raised the store's schema version under that daemon, which then refused every new
/// connection, logging it once a second while `status` said only "disconnected").
@Suite struct UpgradeTests {
    @Test func theCLIBesideAnEarlierDaemonLeavesTheSchemaAndSaysToRestartIt() throws {
        let folder = TemporaryFolder()
        let cli = GroupSyncBinary(home: folder.path + "/home")
        try cli.run("init")
        try cli.run("set", "group.app", "before", "1")
        let storePath = cli.home + "/store.db"
        do {
            // The store as the groupsync before this one left it: schema version 1.
            let database = try SQLiteDatabase(path: storePath)
            try database.execute("PRAGMA user_version = 1")
        }
        // An earlier daemon holds the home's lock, as any daemon does.
        let lock = open(cli.home + "/daemon.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(flock(lock, LOCK_EX | LOCK_NB) == 0)

        let beside = try cli.run("set", "group.app", "beside", "2")
        #expect(beside.status == 0, "\(beside.stderr)")
        #expect(beside.stderr.contains("is an earlier groupsync's; restart it (groupsync serve)"), "\(beside.stderr)")
        #expect(try StoreSchema.userVersion(SQLiteDatabase(path: storePath)) == 1, "left for the earlier daemon")

        close(lock)  // the daemon stops; the next command raises the version, and says nothing
        let after = try cli.run("get", "group.app", "beside")
        #expect(after.status == 0 && after.stdout == "2\n" && after.stderr.isEmpty, "\(after.stderr)")
        #expect(try StoreSchema.userVersion(SQLiteDatabase(path: storePath)) == 2)
    }
}
