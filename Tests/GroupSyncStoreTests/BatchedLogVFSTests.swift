import CSQLite
import Foundation
import GroupSyncCore
import GroupSyncTestSupport
import Testing
@testable import GroupSyncStore

/// The batched-log VFS (Sources/CBatchedLogVFS) holds a transaction's log frames and writes them at once.
/// What it must never change is the files: these tests read what a `Store` wrote with SQLite's default VFS,
/// including a copy of the log with no shared-memory index, which SQLite rebuilds by checking every frame's
/// checksum (a wrong byte, order or length in what the shim wrote ends the log there and loses the rows).
@Suite struct BatchedLogVFSTests {
    static let me = try! DeviceID(bytes: Array(repeating: 1, count: 32))

    @Test func storesOpenThroughIt() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path + "/store.db", device: Self.me)
        var name: UnsafeMutablePointer<CChar>?
        #expect(sqlite3_file_control(store.database.handle, "main", SQLITE_FCNTL_VFSNAME, &name) == SQLITE_OK)
        defer { sqlite3_free(name) }
        #expect(name.map { String(cString: $0) } == "groupsync-batched-log/unix")
    }

    /// A write the disk refuses fails its commit, through the shim's held frames too: on a small tmpfs the
    /// store fills up, the write that does not fit throws `diskFull`, every acknowledged write is still there,
    /// the file passes SQLite's check, and once there is room again (in a new connection, as after a restart)
    /// writes go on. Needs root to mount the tmpfs; skipped otherwise.
    @Test func aFullDiskFailsTheWriteAndLosesNothingAcknowledged() throws {
        guard getuid() == 0 else { try Test.cancel("mounting a tmpfs needs root") }
        let folder = TemporaryFolder()
        let mountPoint = folder.path + "/small"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        guard Self.sh("mount -t tmpfs -o size=768k tmpfs '\(mountPoint)'") == 0 else { try Test.cancel("cannot mount a tmpfs here") }
        defer { _ = Self.sh("umount '\(mountPoint)'") }
        let path = mountPoint + "/store.db"
        // Room held back, to be given back once the disk is full.
        let filler = mountPoint + "/filler"
        try Data(count: 256 * 1024).write(to: URL(fileURLWithPath: filler))
        var acknowledged: [String] = []
        var refusal: StoreError?
        do {
            let store = try Store(path: path, device: Self.me)
            let value = Value.string(String(repeating: "x", count: 3000))
            for index in 0..<2000 {
                do {
                    try store.set(value, suite: "fill", key: "k\(index)")
                    acknowledged.append("k\(index)")
                } catch {
                    refusal = error
                    break
                }
            }
        }
        #expect(refusal == .diskFull(path: path), "\(String(describing: refusal)) after \(acknowledged.count) writes")
        // Room again, and a new connection, as after a restart.
        try FileManager.default.removeItem(atPath: filler)
        let reopened = try Store(path: path, device: Self.me)
        #expect(try reopened.integrityCheck() == ["ok"])
        let stored = Set(try reopened.liveEntries(suite: "fill").map(\.key))
        #expect(acknowledged.allSatisfy(stored.contains), "acknowledged writes lost: \(acknowledged.filter { !stored.contains($0) }.prefix(5))")
        #expect(throws: Never.self) { try reopened.set(.int(1), suite: "fill", key: "after") }
    }

    private static func sh(_ command: String) -> Int32 {
        guard let shell = try? ChildProcess("/bin/sh", ["-c", command]) else { return -1 }
        return shell.waitForExit(timeout: .seconds(60)).status
    }

    /// Transactions far larger than what the shim holds (96 KiB) are written in several pieces; small ones
    /// in one. Both kinds, interleaved, must be readable by another connection at once and rebuild from the log.
    @Test func theLogItWritesIsTheLogSQLiteWrites() throws {
        let folder = TemporaryFolder()
        let path = folder.path + "/store.db"
        let store = try Store(path: path, device: Self.me)
        // A cache of 5 pages makes the large transactions spill frames before their commit and write some of
        // them again, which SQLite finishes by rewriting their headers' checksums (`walRewriteChecksums`).
        try store.database.execute("PRAGMA cache_size=5")
        var clock = HybridClock(last: try store.currentClock())
        let value = String(repeating: "v", count: 400)
        var expected = 0
        for round in 0..<3 {
            let entries = (0..<2000).map { index in
                Entry(suite: "bulk", key: "r\(round)-\(index)", value: .string(value + "\(index)"),
                      version: Version(hlc: clock.tick(physicalMillis: 1_000_000), origin: Self.other))
            }
            _ = try store.apply(entries)
            for key in 0..<5 { try store.set(.int(Int64(key)), suite: "small", key: "r\(round)-\(key)") }
            expected += 2005
        }

        // Another connection with the default VFS, while the store is open and the log not checkpointed.
        #expect(try Self.count(path: path) == expected)

        // A copy of the database and its log without the index: SQLite recovers the log frame by frame.
        let copy = folder.path + "/copy.db"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        #expect(try Self.count(path: copy) == expected)
        #expect(try Self.integrity(path: copy) == "ok")
    }

    /// A log another connection restarted still gets this connection's commits in one write each. A handle
    /// used to judge "a rewrite" by how far it had itself written since *it* last restarted the log, so after
    /// another connection restarted it, every frame it appended below that old end went out at once, as two
    /// writes (found by a crash-consistency review tracing the daemon: about half its frames).
    @Test func aLogRestartedByAnotherConnectionStillGetsOneWritePerCommit() throws {
        let folder = TemporaryFolder()
        let path = folder.path + "/store.db"
        let a = try Store(path: path, device: Self.me)
        let b = try Store(path: path, device: Self.other)
        // a writes far into the log: its handle has written hundreds of frames.
        let value = String(repeating: "v", count: 400)
        try a.write((0..<400).map { LocalWrite.set(suite: "s", key: "a\($0)", value: .string(value)) })
        // b checkpoints the whole log, then its next commit restarts the log from its start.
        try b.database.execute("PRAGMA wal_checkpoint(RESTART)")
        try b.set(.int(1), suite: "s", key: "b")
        // a's next commit appends after b's frames, far below where a's handle had written before.
        let writes = (0..<8).map { LocalWrite.set(suite: "s", key: "a-next-\($0)", value: .string(value)) }
        let before = try Self.writeCallsOfThisThread()
        try a.write(writes)
        let calls = try Self.writeCallsOfThisThread() - before
        // The frames in one write, and the change signal's byte: a dozen frames as two writes each was 20 and more.
        #expect(calls <= 3, "\(calls) write calls for one commit")
        #expect(try Self.count(path: path) == 409)
        #expect(try Self.integrity(path: path) == "ok")
    }

    /// How many write system calls this thread has made (the kernel's `syscw`; SQLite writes on the caller's thread).
    static func writeCallsOfThisThread() throws -> Int {
        let io = try String(contentsOfFile: "/proc/thread-self/io", encoding: .utf8)
        guard let line = io.split(separator: "\n").first(where: { $0.hasPrefix("syscw:") }),
              let count = Int(line.dropFirst("syscw:".count).trimmingCharacters(in: .whitespaces)) else {
            throw VFSTestError("no syscw in /proc/thread-self/io")
        }
        return count
    }

    static let other = try! DeviceID(bytes: Array(repeating: 2, count: 32))

    /// Rows in `entries`, read through SQLite's default VFS.
    static func count(path: String) throws -> Int {
        Int(try scalar(path: path, "SELECT count(*) FROM entries") ?? "-1") ?? -1
    }

    static func integrity(path: String) throws -> String? {
        try scalar(path: path, "PRAGMA integrity_check")
    }

    static func scalar(path: String, _ sql: String) throws -> String? {
        var db: OpaquePointer?
        defer { sqlite3_close(db) }
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else { throw VFSTestError(String(cString: sqlite3_errmsg(db))) }
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, sqlite3_step(statement) == SQLITE_ROW,
              let text = sqlite3_column_text(statement, 0) else { throw VFSTestError(String(cString: sqlite3_errmsg(db))) }
        return String(cString: text)
    }

    struct VFSTestError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
