import Foundation

/// How a named thread of a running process is blocked, read from `/proc/<pid>/task/<tid>/syscall`: a
/// condition-variable wait is a `futex` call whose fourth argument points at a timeout, or is 0 for none.
/// A thread asleep with no timeout wakes only when something signals it; one with a timeout is a timer.
/// Reading another process's `syscall` needs ptrace rights, which a parent has over its child.
enum ThreadSleep: Equatable, CustomStringConvertible {
    /// Blocked in `futex` with no timeout.
    case untimed
    /// Blocked in `futex` with a timeout: it will wake by itself.
    case timed
    /// Not (yet) seen blocked in `futex`: the raw `syscall` line last read, or why none was.
    case other(String)

    #if arch(x86_64)
    static let futex = "202"
    #elseif arch(arm64)
    static let futex = "98"
    #endif

    var description: String {
        switch self {
        case .untimed: "asleep with no timeout"
        case .timed: "asleep with a timeout (a timer)"
        case .other(let line): "not in a futex wait: \(line)"
        }
    }

    /// How the thread named `name` of `pid` sleeps, once it has settled into a futex wait; the same answer
    /// must hold for `settle` seconds running, so a thread passing through a short wait is not taken for asleep.
    static func of(pid: Int32, thread name: String, within timeout: TimeInterval = 5, settle: TimeInterval = 0.3) -> ThreadSleep {
        let deadline = Date().addingTimeInterval(timeout)
        var last = ThreadSleep.other("no thread named \(name)")
        var since = Date()
        while Date() < deadline {
            let now = read(pid: pid, thread: name)
            if now != last { last = now; since = Date() }
            if case .other = now {} else if Date().timeIntervalSince(since) >= settle { return now }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return last
    }

    /// How the thread sleeps once it has settled into `wanted`, or the last settled answer if it has not
    /// within `timeout`: for a change that comes when a timer of the daemon's runs out, which a fixed pause
    /// on a loaded machine may not reach.
    static func awaiting(_ wanted: ThreadSleep, pid: Int32, thread name: String, within timeout: TimeInterval = 6) -> ThreadSleep {
        let deadline = Date().addingTimeInterval(timeout)
        var seen = of(pid: pid, thread: name, within: timeout)
        while seen != wanted && Date() < deadline { seen = of(pid: pid, thread: name, within: deadline.timeIntervalSinceNow) }
        return seen
    }

    private static func read(pid: Int32, thread name: String) -> ThreadSleep {
        let tasks = "/proc/\(pid)/task"
        for tid in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
            let comm = (try? String(contentsOfFile: "\(tasks)/\(tid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            guard comm == name else { continue }
            guard let line = try? String(contentsOfFile: "\(tasks)/\(tid)/syscall", encoding: .utf8) else { return .other("syscall unreadable") }
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count > 4, fields[0] == futex else { return .other(line) }
            return fields[4] == "0x0" ? .untimed : .timed
        }
        return .other("no thread named \(name)")
    }
}
