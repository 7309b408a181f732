import Foundation
import Testing

/// What the kernel counts for a process, read from /proc: how tests check a daemon's CPU, memory and threads.
enum ProcFS {
    /// CPU time used so far, user plus system, in clock ticks (100 a second).
    static func cpuTicks(_ pid: Int32) throws -> Int {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // After the command name in parentheses (which may hold spaces): state is field 3, utime 14, stime 15.
        let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
        return try #require(Int(fields[11])) + (try #require(Int(fields[12])))
    }

    /// A number from /proc/PID/status: "Threads:", or "VmRSS:" and "VmPeak:" in kB.
    static func statusField(_ pid: Int32, _ field: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix(field) })
        // "Threads:\t5", "VmRSS:\t   1234 kB": a tab, then maybe spaces.
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        return try #require(fields.dropFirst().first.flatMap { Int($0) }, "no number in '\(line)'")
    }

    /// How many of the process's file descriptors are open on a path ending with `suffix`.
    static func openFiles(_ pid: Int32, endingWith suffix: String) throws -> Int {
        let folder = "/proc/\(pid)/fd"
        return try FileManager.default.contentsOfDirectory(atPath: folder).filter {
            ((try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + $0)) ?? "").hasSuffix(suffix)
        }.count
    }
}
