import Foundation

/// Counts a process's *timer* wake-ups over a window: with `strace -f` attached, every blocking call that
/// returned because its timeout expired (poll/ppoll/select "= 0 (Timeout)", futex/sem "ETIMEDOUT",
/// epoll_wait "= 0", a sleep) — as opposed to wake-ups caused by a message, a signal or another thread.
/// strace slows the traced threads, so this runs in its own window, after the untraced ones.
enum TimerWakeups {
    static var available: Bool { Subprocess.which("strace") != nil }

    /// Timer wake-ups per thread over `seconds`; nil without strace.
    static func count(pids: [Int32], seconds: Double, folder: String) throws -> [[Int: Int]]? {
        guard let strace = Subprocess.which("strace") else { return nil }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var tracers: [(Subprocess, String)] = []
        for pid in pids {
            let output = "\(folder)/strace-\(pid).txt"
            let tracer = try Subprocess(strace, ["-f", "-qq", "-e", "trace=poll,ppoll,select,pselect6,epoll_wait,epoll_pwait,futex,nanosleep,clock_nanosleep,rt_sigtimedwait",
                                                 "-p", String(pid), "-o", output])
            tracers.append((tracer, output))
        }
        usleep(UInt32(seconds * 1_000_000))
        for (tracer, _) in tracers { tracer.stop(signal: SIGINT) }
        return tracers.map { (_, output) in
            var perThread: [Int: Int] = [:]
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") where isTimeout(line) {
                if let tid = line.split(separator: " ").first.flatMap({ Int($0) }) { perThread[tid, default: 0] += 1 }
            }
            return perThread
        }
    }

    static func isTimeout(_ line: Substring) -> Bool {
        if line.contains("(Timeout)") || line.contains("ETIMEDOUT") { return true }
        if line.contains("nanosleep") && line.hasSuffix("= 0") { return true }
        return line.contains("epoll") && line.hasSuffix(" = 0")
    }
}
