import Foundation

/// What /proc says about a process: memory, CPU time and wake-ups, summed over all of its threads.
struct ProcStats {
    /// Resident set, bytes.
    var rssBytes: Int
    /// Peak resident set, bytes.
    var peakRSSBytes: Int
    /// CPU time of all threads, nanoseconds (schedstat: exact, unlike the 10 ms ticks of utime+stime).
    var cpuNanos: UInt64
    /// utime+stime from /proc/PID/stat, in clock ticks, as a cross-check.
    var cpuTicks: Int
    /// Context switches of all threads; a thread that sleeps and wakes costs one voluntary switch.
    var voluntarySwitches: Int
    var involuntarySwitches: Int
    /// Per thread: (tid, voluntary + involuntary switches), to see which thread wakes.
    var perThread: [(tid: Int, switches: Int)]

    var wakeups: Int { voluntarySwitches + involuntarySwitches }

    static func read(pid: Int32) throws -> ProcStats {
        let status = try text("/proc/\(pid)/status")
        var stats = ProcStats(rssBytes: field(status, "VmRSS") * 1024, peakRSSBytes: field(status, "VmHWM") * 1024,
                              cpuNanos: 0, cpuTicks: 0, voluntarySwitches: 0, involuntarySwitches: 0, perThread: [])
        let stat = try text("/proc/\(pid)/stat")
        if let close = stat.lastIndex(of: ")") {
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            // Fields after the command: state is [0], utime is field 14 overall -> [11], stime [12].
            if fields.count > 12 { stats.cpuTicks = (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0) }
        }
        let tids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for tid in tids.compactMap(Int.init).sorted() {
            guard let taskStatus = try? text("/proc/\(pid)/task/\(tid)/status") else { continue }
            let voluntary = field(taskStatus, "voluntary_ctxt_switches")
            let involuntary = field(taskStatus, "nonvoluntary_ctxt_switches")
            stats.voluntarySwitches += voluntary
            stats.involuntarySwitches += involuntary
            stats.perThread.append((tid, voluntary + involuntary))
            if let schedstat = try? text("/proc/\(pid)/task/\(tid)/schedstat"),
               let onCPU = schedstat.split(separator: " ").first.flatMap({ UInt64($0) }) {
                stats.cpuNanos += onCPU
            }
        }
        return stats
    }

    private static func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    /// A "Name:   123 kB" field of /proc/PID/status, as the number.
    private static func field(_ status: String, _ name: String) -> Int {
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            return Int(line.dropFirst(name.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? 0
        }
        return 0
    }
}

/// What an idle window cost a process: differences of two `ProcStats`.
struct IdleCost {
    var seconds: Double
    var cpuMillis: Double
    var cpuTicks: Int
    var wakeups: Int
    /// Threads that woke in the window, with how often.
    var busyThreads: [(tid: Int, switches: Int)]

    init(before: ProcStats, after: ProcStats, seconds: Double) {
        self.seconds = seconds
        cpuMillis = Double(after.cpuNanos &- before.cpuNanos) / 1e6
        cpuTicks = after.cpuTicks - before.cpuTicks
        wakeups = after.wakeups - before.wakeups
        let earlier = Dictionary(before.perThread.map { ($0.tid, $0.switches) }, uniquingKeysWith: { $1 })
        busyThreads = after.perThread.compactMap { thread in
            let delta = thread.switches - (earlier[thread.tid] ?? 0)
            return delta > 0 ? (thread.tid, delta) : nil
        }
    }
}
