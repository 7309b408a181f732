import Foundation

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
        let process = makeProcess(arguments, executable: executable)
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes to the end before waiting, so a chatty child cannot block on a full pipe.
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
    }

    private func makeProcess(_ arguments: [String], executable: String = Self.path) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["GROUPSYNC_HOME"] = home
        process.environment = environment
        return process
    }

    /// Starts a long-running command (watch, serve) and returns the process with its stdout pipe.
    func start(_ arguments: [String]) throws -> (Process, Pipe) {
        let process = makeProcess(arguments)
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, out)
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
