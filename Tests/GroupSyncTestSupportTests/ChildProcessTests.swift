import Foundation
import GroupSyncTestSupport
import Testing

/// The harness the process tests stand on: what a child inherits, and that no wait outlives its deadline.
struct ChildProcessTests {
    /// A descriptor this process opened without close-on-exec — as Foundation's pipes and sockets are, and as
    /// another test's may be at the moment of a spawn — does not reach the child.
    @Test func aChildInheritsOnlyItsStandardDescriptors() throws {
        let stray = open("/dev/null", O_RDONLY)
        defer { close(stray) }
        let listing = try ChildProcess.run("/bin/sh", ["-c", "ls /proc/$$/fd"]).output
        #expect(listing.split(separator: "\n").sorted() == ["0", "1", "2"], "the shell holds more, \(stray) open here")
    }

    /// One child's pipes never reach another: a child started while the first is running holds 0, 1 and 2
    /// only, and the first sees the end of its input as soon as we close it.
    @Test func oneChildsPipesDoNotLeakIntoAnother() throws {
        let first = try ChildProcess("/bin/cat", [], stdin: .pipe, stdout: .pipe)
        // The second child says when it is ready and then waits on its input: looked at any earlier, it may
        // still be in the dynamic loader, which holds the libraries it maps open as fd 3 for a moment.
        let second = try ChildProcess("/bin/sh", ["-c", "echo ready; read line"], stdin: .pipe, stdout: .pipe)
        defer { second.terminate() }
        #expect(try second.readLine() == "ready")
        let held = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(second.pid)/fd").sorted()
        #expect(held == ["0", "1", "2"])
        try first.send("hello")
        #expect(try first.readLine() == "hello")
        first.closeInput()
        #expect(first.waitForExit(timeout: .seconds(5)) == .exited(0))
    }

    /// The test runner's threads block most signals and this process ignores SIGPIPE; a child starts with
    /// neither, so a SIGTERM ends it.
    @Test func aChildStartsWithNoSignalBlockedOrIgnored() throws {
        var blocked = sigset_t(), saved = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &blocked, &saved)
        let child = try ChildProcess("/bin/sleep", ["30"])
        pthread_sigmask(SIG_SETMASK, &saved, nil)
        let status = try String(contentsOfFile: "/proc/\(child.pid)/status", encoding: .utf8).split(separator: "\n")
        func mask(_ field: String) -> UInt64? {
            status.first { $0.hasPrefix(field + ":\t") }.flatMap { UInt64($0.dropFirst(field.count + 2), radix: 16) }
        }
        // Signals 1 to 31; glibc keeps two real-time signals of its own ignored, which no spawn can reset.
        let standard: UInt64 = 0x7FFF_FFFF
        #expect(mask("SigBlk").map { $0 & standard } == 0)
        #expect(mask("SigIgn").map { $0 & standard } == 0)
        #expect(child.terminate(timeout: .seconds(5)) == .signaled(SIGTERM))
    }

    /// Past its deadline a wait kills the child's whole group, a grandchild that ignores SIGTERM included.
    @Test func aWaitPastItsDeadlineEndsTheWholeGroup() throws {
        let child = try ChildProcess("/bin/sh", ["-c", "trap '' TERM; sleep 60 & echo $!; wait"], stdout: .pipe)
        let grandchild = try #require(try child.readLine().flatMap { pid_t($0) })
        #expect(child.terminate(timeout: .milliseconds(200)) == .signaled(SIGKILL))
        let deadline = ContinuousClock.now + .seconds(5)
        while kill(grandchild, 0) == 0 && ContinuousClock.now < deadline { usleep(10_000) }
        #expect(kill(grandchild, 0) != 0, "the grandchild \(grandchild) outlived its group")
    }

    /// Reading a child that says nothing fails at the deadline instead of hanging the test.
    @Test func readingASilentChildFailsAtItsDeadline() throws {
        let child = try ChildProcess("/bin/sleep", ["30"], stdout: .pipe)
        let started = ContinuousClock.now
        #expect(throws: HarnessError.self) { try child.readLine(timeout: .milliseconds(200)) }
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    /// Writing to a child that does not read fails once the pipe stays full past the deadline.
    @Test func writingToAChildThatDoesNotReadFailsAtItsDeadline() throws {
        let child = try ChildProcess("/bin/sleep", ["30"], stdin: .pipe)
        let started = ContinuousClock.now
        #expect(throws: HarnessError.self) { try child.write(Array(repeating: 0x41, count: 1 << 20), timeout: .milliseconds(200)) }
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test func runCollectsOutputErrorsAndStatus() throws {
        let run = try ChildProcess.run("/bin/sh", ["-c", "cat; echo oops >&2; exit 3"], input: "fed\n", stderr: .pipe)
        #expect(run.output == "fed\n" && run.errors == "oops\n" && run.ending == .exited(3))
        #expect(throws: HarnessError.self) { try ChildProcess.run("/nonexistent/tool", []) }
    }
}
