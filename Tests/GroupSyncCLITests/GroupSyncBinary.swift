import Foundation
import GroupSyncTestSupport

/// Runs the real `groupsync` executable, built beside the test bundle, in a temporary home.
struct GroupSyncBinary {
    static let path: String = {
        if let explicit = ProcessInfo.processInfo.environment["GROUPSYNC_BIN"] { return explicit }
        let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        // .build/debug/GroupSyncPackageTests.xctest → .build/debug/groupsync
        return testBinary.deletingLastPathComponent().appendingPathComponent("groupsync").path
    }()

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    let home: String

    @discardableResult
    func run(_ arguments: String...) throws -> Result { try run(arguments) }

    /// Runs `executable` (default: groupsync) in this home, e.g. `/usr/bin/env timeout 5 groupsync …`.
    func run(_ arguments: [String], executable: String = Self.path) throws -> Result {
        let run = try ChildProcess.run(executable, arguments, environment: environment, stderr: .pipe)
        return Result(status: run.status, stdout: run.output, stderr: run.errors)
    }

    private var environment: [String: String] {
        ProcessInfo.processInfo.environment.merging(["GROUPSYNC_HOME": home]) { $1 }
    }

    /// Starts a long-running command (watch, serve), its stdout a pipe to read (with its stderr, if asked).
    func start(_ arguments: [String], stderr: ChildProcess.Output = .null) throws -> ChildProcess {
        try ChildProcess(Self.path, arguments, environment: environment, stdout: .pipe, stderr: stderr)
    }
}

/// A fresh private folder under /tmp, removed when the test ends.
final class TemporaryFolder {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "groupsync-cli-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
