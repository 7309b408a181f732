import Foundation
import GroupSyncCore
import GroupSyncStore

/// Workload 5: the daemon's resident memory with N keys and 3 connected peers; its CPU time and wake-ups over
/// an idle window with those peers connected; the size of the stripped release binary. Peer: a Redis
/// primary with the same N keys and 3 replicas, measured in the same idle windows.
///
/// Wake-ups are context switches summed over all of the process's threads (/proc/PID/task/*/status): every
/// time a blocked thread runs again costs one, whether a timer or a message woke it, so this is an upper
/// bound on timer wake-ups. CPU time is the sum of the threads' schedstat run time (nanoseconds), with
/// utime+stime ticks as a cross-check.
enum Footprint {
    static func run(_ bench: Bench) throws {
        let workload = "5. Footprint"
        let n = bench.n
        Progress.say("  hub with \(Format.grouped(n)) keys and 3 peers")
        let hub = try bench.device("hub")
        let peers = try (1...3).map { try bench.device("peer\($0)") }
        let hubStore = try hub.openStore(signalCommits: false)
        let peerStores = try peers.map { try $0.openStore(signalCommits: false) }
        try Seeding.fill([hubStore] + peerStores, count: n, origin: hub.id)
        for (peer, store) in zip(peers, peerStores) { try Seeding.markInSync((hub, hubStore), (peer, store)) }
        try hub.start()
        for peer in peers { try peer.start() }
        defer { for device in [hub] + peers { device.stop() } }
        for peer in peers {
            try hub.pair(with: peer, viaPort: peer.port)
            try peer.pair(with: hub, viaPort: hub.port)
        }
        try hub.waitConnected(3)
        for peer in peers { try peer.waitConnected(1) }

        var redis: (primary: RedisServer, replicas: [RedisServer])?
        if bench.redisAvailable {
            let primary = try RedisServer(directory: bench.scratch("idle-redis-primary"))
            try primary.fill(count: n)
            let replicas = try (1...3).map { _ in try RedisServer(directory: bench.scratch("idle-redis-replica"), replicaOfPort: primary.port) }
            for replica in replicas {
                let probe = try replica.client()
                let deadline = Deadline(seconds: 120, "Redis replicas to sync")
                while try replica.info("replication", using: probe)["master_link_status"] != "up" { try deadline.check(); usleep(10_000) }
            }
            redis = (primary, replicas)
        }
        defer { if let redis { for server in [redis.primary] + redis.replicas { server.stop() } } }

        // Settle: first pings, lazily grown buffers, the status calls above.
        usleep(UInt32(bench.options.quick ? 1_000_000 : 3_000_000))
        guard let hubPID = hub.pid else { throw BenchError("the hub's daemon is not running") }

        var rss: [Double] = [], redisRSS: [Double] = []
        var cpu: [Double] = [], wakeups: [Double] = [], redisCPU: [Double] = [], redisWakeups: [Double] = []
        var threadNotes: [String] = []
        for window in 0..<bench.options.idleRuns {
            let before = try ProcStats.read(pid: hubPID)
            let redisBefore = try redis.map { try ProcStats.read(pid: $0.primary.pid) }
            let start = Clock.nanos()
            Progress.say("  idle window \(window + 1) of \(bench.options.idleRuns): \(Format.number(bench.options.idleSeconds, digits: 0)) s")
            usleep(UInt32(bench.options.idleSeconds * 1_000_000))
            let seconds = Double(Clock.nanos() - start) / 1e9
            let after = try ProcStats.read(pid: hubPID)
            let cost = IdleCost(before: before, after: after, seconds: seconds)
            // Normalised to 60 s, the window of the target.
            let scale = 60 / seconds
            cpu.append(cost.cpuMillis * scale)
            wakeups.append(Double(cost.wakeups) * scale)
            rss.append(Double(after.rssBytes) / 1e6)
            threadNotes.append("window \(window + 1): \(cost.wakeups) wake-ups in \(Format.number(seconds, digits: 1)) s, \(Format.number(cost.cpuMillis, digits: 2)) ms CPU (\(cost.cpuTicks) ticks); by thread: " +
                               (cost.busyThreads.map { "tid \($0.tid): \($0.switches)" }.joined(separator: ", ")) +
                               " (\(after.perThread.count) threads)")
            if let redis, let redisBefore {
                let redisAfter = try ProcStats.read(pid: redis.primary.pid)
                let redisCost = IdleCost(before: redisBefore, after: redisAfter, seconds: seconds)
                redisCPU.append(redisCost.cpuMillis * scale)
                redisWakeups.append(Double(redisCost.wakeups) * scale)
                redisRSS.append(Double(redisAfter.rssBytes) / 1e6)
            }
        }
        let peak = (try? ProcStats.read(pid: hubPID).peakRSSBytes).map { Double($0) / 1e6 }

        // Timer wake-ups proper, in one more window with strace attached to both.
        var timers: [Double] = [], redisTimers: [Double] = []
        if TimerWakeups.available {
            Progress.say("  strace window: \(Format.number(bench.options.idleSeconds, digits: 0)) s")
            let pids = [hubPID] + (redis.map { [$0.primary.pid] } ?? [])
            if let counts = try TimerWakeups.count(pids: pids, seconds: bench.options.idleSeconds, folder: bench.scratch("strace")) {
                let scale = 60 / bench.options.idleSeconds
                timers = [Double(counts[0].values.reduce(0, +)) * scale]
                if counts.count > 1 { redisTimers = [Double(counts[1].values.reduce(0, +)) * scale] }
                threadNotes.append("strace window: timed-out waits by thread: " + counts[0].sorted { $0.key < $1.key }.map { "tid \($0.key): \($0.value)" }.joined(separator: ", "))
            }
        } else {
            bench.results.skip("idle timer wake-ups", "strace is not installed (apt-get install strace)")
        }
        bench.results.extra["idleThreads"] = threadNotes
        let redisName: String? = redis == nil ? nil : "Redis primary, 3 replicas"
        bench.results.add(Row(workload: workload, metric: "daemon RSS, \(Format.grouped(n)) keys, 3 peers connected", unit: "MB",
                              groupsyncRuns: rss, peerName: redisName, peerRuns: redisRSS, target: .atMost(40, "≤ 40 MB"),
                              how: "VmRSS of the hub's `groupsync serve` (/proc/PID/status) at the end of each idle window; the hub and its 3 peers hold the same N keys, in sync. Peak (VmHWM) \(peak.map { Format.value($0, "MB") } ?? "?"), reached while starting up. Redis: VmRSS of the primary holding the same keys with 3 replicas."))
        bench.results.add(Row(workload: workload, metric: "idle CPU time per 60 s, 3 peers connected", unit: "ms",
                              groupsyncRuns: cpu, peerName: redisName, peerRuns: redisCPU, target: .atMost(6, "no measurable CPU (≤ 6 ms per 60 s, 0.01% of a core)"),
                              how: "Sum of all threads' run time (/proc/PID/task/*/schedstat) over \(bench.options.idleRuns) idle window(s) of \(Format.number(bench.options.idleSeconds, digits: 0)) s with nothing written, scaled to 60 s. Redis measured in the same windows."))
        if !timers.isEmpty {
            bench.results.add(Row(workload: workload, metric: "idle timer wake-ups per 60 s, 3 peers connected", unit: "count",
                                  groupsyncRuns: timers, peerName: redisName, peerRuns: redisTimers,
                                  target: .atMost(6, "≤ 1 per 30 s per peer (6 per 60 s)"),
                                  how: "Blocking calls of any thread that returned because their timeout expired (poll/select `= 0 (Timeout)`, futex `ETIMEDOUT`, epoll_wait `= 0`, sleeps), counted with `strace -f` attached to the idle hub for one more window of \(Format.number(bench.options.idleSeconds, digits: 0)) s, scaled to 60 s; Redis traced in the same window. Wake-ups caused by a peer's message are not timers and are not counted here (see the next row)."))
        }
        bench.results.add(Row(workload: workload, metric: "idle wake-ups of any cause per 60 s, 3 peers connected", unit: "count",
                              groupsyncRuns: wakeups, peerName: redisName, peerRuns: redisWakeups, target: nil,
                              how: "Context switches (voluntary + involuntary) of all threads (/proc/PID/task/*/status) over the untraced windows, scaled to 60 s: every time a blocked thread runs again, whatever woke it — the keep-alive timers, the peers' pings and pongs, and the hand-offs between a connection's reader and writer threads. Per-thread counts are in results.json (extra.idleThreads)."))

        let stripped = try strippedSize(bench.binary, into: bench.scratch("stripped"))
        let redisSize = RedisServer.executable.flatMap { path -> Double? in
            let real = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)).map { $0.hasPrefix("/") ? $0 : URL(fileURLWithPath: path).deletingLastPathComponent().path + "/" + $0 } ?? path
            return (try? FileManager.default.attributesOfItem(atPath: real)[.size] as? NSNumber)?.map { $0.doubleValue / 1e6 }
        }
        bench.results.add(Row(workload: workload, metric: "release binary, stripped", unit: "MB",
                              groupsyncRuns: [stripped], peerName: redisSize == nil ? nil : "redis-server (Debian, stripped)", peerRuns: redisSize.map { [$0] } ?? [],
                              target: nil,
                              how: "`strip` of a copy of the release `groupsync` (built with --static-swift-stdlib, so the Swift runtime is inside; SQLite and OpenSSL are shared libraries). Redis: the Debian binary, dynamically linked."))
    }

    static func strippedSize(_ binary: String, into path: String) throws -> Double {
        try FileManager.default.copyItem(atPath: binary, toPath: path)
        if let strip = Subprocess.which("strip") { _ = try Subprocess.run(strip, [path]) }
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.doubleValue ?? 0
        return size / 1e6
    }
}
