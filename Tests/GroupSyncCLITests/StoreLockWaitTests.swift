import Foundation
import GroupSyncTestSupport
import Testing

/// A write that waits on another process's lock on the store says so within a couple of seconds, naming
/// the process, and goes in once the lock is let go: it neither fails nor looks hung.
@Suite struct StoreLockWaitTests {
    /// Another program's write transaction on the store (SQLite's own lock): any program may open the file.
    @Test func aWriteWaitingOnAnotherProgramsTransactionNamesIt() throws {
        let folder = TemporaryFolder()
        let cli = GroupSyncBinary(home: folder.path + "/home")
        try #require(try cli.run("init", "--name", "waiting").status == 0)
        try #require(try cli.run("set", "s", "k", "before").status == 0)
        let script = """
            import sqlite3, sys
            store = sqlite3.connect(sys.argv[1], isolation_level=None)
            store.execute("BEGIN IMMEDIATE")
            print("held", flush=True)
            sys.stdin.readline()
            store.execute("COMMIT")
            """
        let holder = try ChildProcess("/usr/bin/env", ["python3", "-c", script, cli.home + "/store.db"], stdin: .pipe, stdout: .pipe)
        defer { holder.terminate() }
        try #require(try holder.readLine() == "held")
        try expectWaitNamed(holder, "python", writingTo: cli)
    }

    /// A write of another groupsync process (the writer lock every write of this store takes first), here
    /// held by `flock(1)` as a process stopped in the middle of a write would hold it.
    @Test func aWriteWaitingOnTheWriterLockNamesItsHolder() throws {
        let folder = TemporaryFolder()
        let cli = GroupSyncBinary(home: folder.path + "/home")
        try #require(try cli.run("init", "--name", "waiting").status == 0)
        try #require(try cli.run("set", "s", "k", "before").status == 0)
        let holder = try ChildProcess("/usr/bin/flock", [cli.home + "/store.db-writer", "/bin/sh", "-c", "echo held; read line"],
                                      stdin: .pipe, stdout: .pipe)
        defer { holder.terminate() }
        try #require(try holder.readLine() == "held")
        try expectWaitNamed(holder, "flock", writingTo: cli)
    }

    /// The daemon's own writes (here a control-socket `set`) wait the same way, and its log says so.
    @Test func theDaemonLogsAWriteThatWaitsOnTheLock() throws {
        let folder = TemporaryFolder()
        let device = try TestDevice("a", in: folder)
        try device.start()
        let holder = try ChildProcess("/usr/bin/flock", [device.cli.home + "/store.db-writer", "/bin/sh", "-c", "echo held; read line"],
                                      stdin: .pipe, stdout: .pipe)
        defer { holder.terminate() }
        try #require(try holder.readLine() == "held")
        nonisolated(unsafe) let client = try UnixClient(path: device.cli.home + "/control.sock")
        let answer = Answer()
        Thread.detachNewThread { answer.set(client.request(#"{"command":"set","suite":"s","key":"k","type":"string","value":"v"}"#)) }
        #expect(device.awaitLog(containing: "event=store-lock-waiting detail=\"waiting for the store's write lock, held by process \(holder.pid) (flock)"),
                "\(device.log)")
        #expect(answer.value == nil, "the write waits")
        try holder.send("let go")
        #expect(answer.await(timeout: 10)?.contains(#""ok":true"#) == true)
        #expect(try device.cli.run("get", "s", "k").stdout == "v\n")
    }

    /// A string one thread sets and another waits for.
    final class Answer: @unchecked Sendable {
        private let condition = NSCondition()
        private var text: String?
        var value: String? { condition.lock(); defer { condition.unlock() }; return text }
        func set(_ value: String) { condition.lock(); text = value; condition.broadcast(); condition.unlock() }
        func await(timeout: TimeInterval) -> String? {
            let deadline = Date().addingTimeInterval(timeout)
            condition.lock()
            defer { condition.unlock() }
            while text == nil && condition.wait(until: deadline) {}
            return text
        }
    }

    private func expectWaitNamed(_ holder: ChildProcess, _ name: String, writingTo cli: GroupSyncBinary) throws {
        let started = ContinuousClock.now
        let writer = try cli.start(["set", "s", "k", "after"], stderr: .toStdout)
        defer { writer.terminate() }
        let notice = try writer.readLine(timeout: .seconds(10)) ?? ""
        #expect(notice.hasPrefix("groupsync set: waiting for the store's write lock, held by process \(holder.pid) (\(name)"), "\(notice)")
        #expect(notice.hasSuffix("; the write goes in once it is let go"), "\(notice)")
        #expect(ContinuousClock.now - started >= .milliseconds(900), "said after the wait had lasted a while")
        #expect(writer.isRunning, "still waiting, not failed")
        try holder.send("let go")
        #expect(writer.waitForExit(timeout: .seconds(10)) == .exited(0))
        #expect(try writer.readToEnd(timeout: .seconds(5)).output == "", "one notice per wait")
        #expect(try cli.run("get", "s", "k").stdout == "after\n")
    }
}
