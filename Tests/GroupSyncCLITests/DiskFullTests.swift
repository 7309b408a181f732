import Foundation
import GroupSyncCore
import GroupSyncStore
import GroupSyncTestSupport
import Testing

/// A full disk, with real processes on a small tmpfs: every command says so by name (exit 3) and changes
/// nothing, no acknowledged write is lost, a daemon that cannot store what its peer sends says why in
/// `status`, and everything goes on once there is room. Mounting a tmpfs needs root: skipped otherwise.
@Suite struct DiskFullTests {
    /// A tmpfs of a given size, mounted for one test, private to its owner as a home must be.
    final class SmallDisk {
        let path: String
        private var fillers = 0

        init?(at path: String, kilobytes: Int) throws {
            guard getuid() == 0 else { return nil }
            self.path = path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            guard Self.sh("mount -t tmpfs -o size=\(kilobytes)k,mode=0700 tmpfs '\(path)'") == 0 else { return nil }
        }

        /// Lazily: a daemon the test could not stop must not keep the folder from being removed.
        deinit { _ = Self.sh("umount -l '\(path)'") }

        /// Takes `kilobytes` (or every byte still free) in a file of its own; returns the file, to give the room back.
        func fill(kilobytes: Int? = nil) -> String {
            fillers += 1
            let file = path + "/filler\(fillers)"
            let zeros = kilobytes.map { "head -c \($0 * 1024) /dev/zero" } ?? "cat /dev/zero"
            _ = Self.sh("\(zeros) > '\(file)' 2>/dev/null")
            return file
        }
        func resize(kilobytes: Int) { _ = Self.sh("mount -o remount,size=\(kilobytes)k '\(path)'") }
        func remount(readOnly: Bool) { _ = Self.sh("mount -o remount,\(readOnly ? "ro" : "rw") '\(path)'") }

        private static func sh(_ command: String) -> Int32 {
            (try? ChildProcess.run("/bin/sh", ["-c", command]))?.status ?? -1
        }
    }

    static func isDiskFull(_ result: GroupSyncBinary.Result) -> Bool {
        result.status == 3 && result.stderr.contains("the disk holding ") && result.stderr.contains(" is full; free some space")
    }

    @Test func everyCommandNamesAFullDiskAndNothingAcknowledgedIsLost() throws {
        let folder = TemporaryFolder()
        guard let disk = try SmallDisk(at: folder.path + "/small", kilobytes: 1024) else { try Test.cancel("mounting a tmpfs needs root") }
        let cli = GroupSyncBinary(home: disk.path + "/home")
        try #require(try cli.run("init", "--name", "small").status == 0)
        let reserve = disk.fill(kilobytes: 256)  // given back once the store has filled the rest
        let value = String(repeating: "x", count: 8_000)
        var acknowledged: [String] = []
        var refusal: GroupSyncBinary.Result?
        for index in 0..<200 {
            let result = try cli.run("set", "s", "k\(index)", value)
            guard result.status == 0 else { refusal = result; break }
            acknowledged.append("k\(index)")
        }
        #expect(refusal.map(Self.isDiskFull) == true, "after \(acknowledged.count) writes: \(String(describing: refusal))")
        #expect(acknowledged.count > 10)

        // Room again: a read closes the store cleanly (SQLite then removes its log and the log's shared index).
        try FileManager.default.removeItem(atPath: reserve)
        #expect(try cli.run("get", "s", "k0").stdout == value + "\n")
        // Then every byte taken: even a read needs room (to make that index again), and says so rather than
        // "disk I/O error".
        let full = disk.fill()
        for command in [["get", "s", "k0"], ["list", "s"], ["status"], ["set", "s", "late", "v"], ["delete", "s", "k0"]] {
            let result = try cli.run(command)
            #expect(Self.isDiskFull(result), "\(command): exit \(result.status), \(result.stderr)")
        }

        try FileManager.default.removeItem(atPath: full)
        #expect(try cli.run("list", "s").lines == acknowledged.sorted(), "every acknowledged write, and nothing else")
        #expect(try cli.run("set", "s", "late", "v").status == 0)
        #expect(try cli.run("get", "s", "late").stdout == "v\n")
    }

    /// A home on a file system mounted read-only (a disk remounted after errors, a backup mounted for a
    /// look): every command says so by name, exit 3, where SQLite's own words were "unable to open database
    /// file (No such file or directory)" for a store that was plainly there; and all is as it was once the
    /// file system is writable again.
    @Test func everyCommandNamesAReadOnlyFileSystem() throws {
        let folder = TemporaryFolder()
        guard let disk = try SmallDisk(at: folder.path + "/ro", kilobytes: 4096) else { try Test.cancel("mounting a tmpfs needs root") }
        let cli = GroupSyncBinary(home: disk.path + "/home")
        try #require(try cli.run("init", "--name", "ro").status == 0)
        try #require(try cli.run("set", "s", "k", "before").status == 0)
        disk.remount(readOnly: true)
        defer { disk.remount(readOnly: false) }
        for command in [["get", "s", "k"], ["list", "s"], ["status"], ["set", "s", "k", "after"], ["delete", "s", "k"], ["balance"]] {
            let result = try cli.run(command)
            #expect(result.status == 3 && result.stderr.contains("/home/store.db is mounted read-only"),
                    "\(command): exit \(result.status), \(result.stderr)")
        }
        disk.remount(readOnly: false)
        #expect(try cli.run("get", "s", "k").stdout == "before\n")
        #expect(try cli.run("set", "s", "k", "after").status == 0)
        #expect(try cli.run("get", "s", "k").stdout == "after\n")
    }

    /// b's disk cannot hold a's history. b's daemon keeps what fitted, ends the session with a store failure,
    /// and `status` on both devices says why; given room, b catches up by itself.
    @Test func aPeerWhoseDiskFillsSaysWhyInStatusAndCatchesUpOnceThereIsRoom() throws {
        let folder = TemporaryFolder()
        guard let disk = try SmallDisk(at: folder.path + "/b", kilobytes: 1024) else { try Test.cancel("mounting a tmpfs needs root") }
        let a = try TestDevice("a", in: folder), b = try TestDevice("b", in: folder)
        // 4,000 entries of 300 bytes: more than b's megabyte holds.
        let count = 4_000
        do {
            let origin = try DeviceID(parsing: a.id)
            let store = try Store(path: a.cli.home + "/store.db", device: origin)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            _ = try store.apply((0..<count).map { i in
                Entry(suite: "group.test", key: "bulk\(i)", value: .string(String(repeating: "x", count: 300)),
                      version: Version(hlc: HLC(wallMillis: now, logical: UInt32(i)), origin: origin))
            })
        }
        for device in [a, b] { try device.start() }
        try pairAll([a, b])

        // The status that names the error is the one looked at: read again, it may already be that of the next
        // session, which a dials at once and which shows no error while it lasts (it failed so under load).
        let onB = try b.peerStatus(a, once: { $0["lastError"] != nil }, timeout: 20)
        guard case .string(let error)? = onB["lastError"] else {
            Issue.record("b's status names no error: \(onB)\n\(b.log)")
            return
        }
        #expect(error.contains("the disk holding \(disk.path)/store.db is full"), "\(error)")
        #expect(onB["connected"] == .bool(false))
        let onA = try a.peerStatus(b, once: { $0["lastError"] != nil }, timeout: 20)
        if case .string(let seenByA)? = onA["lastError"] {
            // a learns it from b's error, or (when b's daemon has already dialed again) finds the session cut.
            #expect(seenByA.contains("is full") || seenByA.contains("connection"), "\(seenByA)")
        } else {
            Issue.record("a's status names no error for b: \(onA)")
        }
        // b's store is still readable while its daemon runs (the daemon holds the log's shared index).
        #expect(try b.cli.run("list", "group.test").status == 0)

        disk.resize(kilobytes: 8 * 1024)
        let deadline = Date().addingTimeInterval(60)
        while try b.cli.run("list", "group.test").lines.count < count, Date() < deadline { Thread.sleep(forTimeInterval: 0.2) }
        #expect(try b.cli.run("list", "group.test").lines.count == count, "caught up once there was room\n\(b.log)")
        let healed = try b.peerStatus(a, once: { $0["connected"] == .bool(true) }, timeout: 20)
        #expect(healed["lastError"] == nil, "\(healed)")
        #expect(b.stop() == 0)
    }
}
