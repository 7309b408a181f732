import Foundation
import GroupSyncCore
import GroupSyncDaemon
import GroupSyncStore

/// Workload 1: a write on A until an app on B sees it through `watch`, p50 and p99 over many writes.
/// Peer: Redis, a SET on the primary until the replica's keyspace notification (Redis's own "watch"). Also,
/// for context only (no target uses it), a Redis primary with `appendfsync always`: durable before it
/// replicates, as GroupSync's write is.
///
/// Both sides are measured the same way: the writer takes the time just before issuing the write, a reader
/// thread stamps each notification line as it is read, and the next write starts once the last one arrived.
/// GroupSync's write is `Store.set` in this process (a durable, fsynced commit, signalled like the CLI
/// signals it); spawning `groupsync set` would add 5–10 ms of process start that is not replication.
/// Daemons talk directly (no counting proxy in the path).
enum Propagation {
    static let suite = Seeding.suite

    static func run(_ bench: Bench) throws {
        let writes = bench.options.propagationWrites
        var gsP50: [Double] = [], gsP99: [Double] = [], gsAfterCommitP50: [Double] = [], gsCommitP50: [Double] = []
        var redisP50: [Double] = [], redisP99: [Double] = []
        var durableRedisP50: [Double] = []
        var controlP50: [Double] = [], controlP99: [Double] = []

        let groupsync = try GroupSyncPair(bench)
        defer { groupsync.stop() }
        let redis = bench.redisAvailable ? try RedisPair(bench) : nil
        defer { redis?.stop() }
        let durableRedis = bench.redisAvailable ? try RedisPair(bench, durable: true) : nil
        defer { durableRedis?.stop() }

        // Runs alternate between the two systems, so background noise falls on both alike.
        for run in 0..<bench.runs {
            let profiler = run == 0 ? Profiler.start(bench, name: "propagation", pids: [groupsync.a.pid, groupsync.b.pid].compactMap { $0 }) : nil
            let g = try groupsync.measure(writes: writes, run: run)
            profiler?.stop()
            gsP50.append(Stats.percentile(g.total, 50))
            gsP99.append(Stats.percentile(g.total, 99))
            gsAfterCommitP50.append(Stats.percentile(g.afterCommit, 50))
            gsCommitP50.append(Stats.percentile(g.commit, 50))
            Progress.say("  run \(run + 1): GroupSync p50 \(Format.value(gsP50.last!, "ms")) p99 \(Format.value(gsP99.last!, "ms"))")
            let c = try groupsync.measureThroughControlSocket(writes: writes, run: run)
            controlP50.append(Stats.percentile(c, 50))
            controlP99.append(Stats.percentile(c, 99))
            Progress.say("  run \(run + 1): GroupSync through A's control socket p50 \(Format.value(controlP50.last!, "ms")) p99 \(Format.value(controlP99.last!, "ms"))")
            if let redis {
                let r = try redis.measure(writes: writes, run: run)
                redisP50.append(Stats.percentile(r, 50))
                redisP99.append(Stats.percentile(r, 99))
                Progress.say("  run \(run + 1): Redis p50 \(Format.value(redisP50.last!, "ms")) p99 \(Format.value(redisP99.last!, "ms"))")
            }
            if let durableRedis {
                durableRedisP50.append(Stats.percentile(try durableRedis.measure(writes: writes, run: run), 50))
                Progress.say("  run \(run + 1): Redis, appendfsync always, p50 \(Format.value(durableRedisP50.last!, "ms"))")
            }
        }

        let workload = "1. Propagation"
        let how = "\(writes) sequential writes of an 80-byte value per run, \(bench.runs) runs, median of the per-run percentiles; clock from just before the write call on A to the line read from `groupsync watch` on B (Redis: from just before SET on the primary to the keyspace notification read from the replica)."
        let redisName: String? = redis == nil ? nil : "Redis primary→replica"
        bench.results.add(Row(workload: workload, metric: "p50, write on A → visible in watch on B", unit: "ms",
                              groupsyncRuns: gsP50, peerName: redisName, peerRuns: redisP50,
                              target: .all([.atMost(1, ""), .ratioAtMost(3, "")], "≤ 1 ms and ≤ 3× Redis p50"), how: how))
        bench.results.add(Row(workload: workload, metric: "p99, write on A → visible in watch on B", unit: "ms",
                              groupsyncRuns: gsP99, peerName: redisName, peerRuns: redisP99,
                              target: .atMost(5, "≤ 5 ms"), how: how))
        let controlHow = "As the rows above, but each write is a `set` sent to A's daemon over its control socket (`ControlConnection`, the connection kept open as an app that writes often keeps it); the daemon acknowledges it once durable, and the next write starts once both the acknowledgement and B's watch line are in."
        bench.results.add(Row(workload: workload, metric: "p50, write through A's control socket → visible in watch on B", unit: "ms",
                              groupsyncRuns: controlP50, peerName: redisName, peerRuns: redisP50, target: nil, how: controlHow))
        bench.results.add(Row(workload: workload, metric: "p99, write through A's control socket → visible in watch on B", unit: "ms",
                              groupsyncRuns: controlP99, peerName: redisName, peerRuns: redisP99, target: nil, how: controlHow))
        bench.results.add(Row(workload: workload, metric: "p50, write on A → visible on B, against a Redis primary that fsyncs each write", unit: "ms",
                              groupsyncRuns: gsP50, peerName: durableRedis == nil ? nil : "Redis, appendfsync always", peerRuns: durableRedisP50,
                              target: nil,
                              how: "For context, not a target: the GroupSync figure of the first row, beside a Redis primary run with `appendonly yes, appendfsync always`, so that each SET is on disk before it is acknowledged, as GroupSync's `Store.set` is before it returns. Redis replicates the SET after its fsync; GroupSync forwards the write from its commit, while its fsync runs. Measured as the first row's Redis figure, in the same runs."))
        bench.results.add(Row(workload: workload, metric: "p50 of A's durable local commit (part of the above)", unit: "ms",
                              groupsyncRuns: gsCommitP50, target: nil,
                              how: "Time `Store.set` took to return on A (a SQLite WAL commit, then the log's fsync), in the same writes. A's daemon starts forwarding the write when it is committed, before the fsync, so part of this overlaps the row below."))
        bench.results.add(Row(workload: workload, metric: "p50, A's commit returned → visible on B", unit: "ms",
                              groupsyncRuns: gsAfterCommitP50, target: nil,
                              how: "From `Store.set` returning on A to the watch line on B: what replication adds after A's write is durable (inotify on A, read, TLS, apply on B, inotify on B, watch's read; all of it begins at A's commit, before A's fsync)."))
    }
}

/// Two paired daemons, A and B, and a `watch` on B.
private final class GroupSyncPair {
    let a: BenchDevice, b: BenchDevice
    let store: Store
    let watch: Subprocess
    let board = ArrivalBoard()

    init(_ bench: Bench) throws {
        a = try bench.device("prop-a")
        b = try bench.device("prop-b")
        try a.start()
        try b.start()
        try a.pair(with: b, viaPort: b.port)
        try b.pair(with: a, viaPort: a.port)
        try a.waitConnected(1)
        try b.waitConnected(1)
        store = try a.openStore()
        watch = try Subprocess(bench.binary, ["--home", b.home.path, "watch", Propagation.suite], stdout: .pipe)
        let board = self.board
        let fd = watch.stdoutFD!
        Thread.detachNewThread {
            var reader = LineReader(fd: fd)
            while true {
                let (lines, at, eof) = reader.next()
                if eof { return }
                for line in lines {
                    // {"suite":…,"key":"K",…}: the key is all the board needs.
                    guard let start = line.range(of: "\"key\":\"") else { continue }
                    let rest = line[start.upperBound...]
                    if let end = rest.firstIndex(of: "\"") { board.post(String(rest[..<end]), at: at) }
                }
            }
        }
        // `watch` reports changes after the head it reads when it starts, so probe until it has started.
        var probe = 0
        let ready = Deadline(seconds: 20, "B's watch to report a change")
        while true {
            try store.set(.int(Int64(probe)), suite: Propagation.suite, key: "probe-\(probe)")
            if board.wait(for: "probe-\(probe)", seconds: 0.2) != nil { break }
            try ready.check()
            probe += 1
        }
        // Warm up: the session has carried a few writes.
        for i in 0..<20 {
            let key = "warm-\(i)"
            try store.set(Seeding.value(i), suite: Propagation.suite, key: key)
            guard board.wait(for: key, seconds: 10) != nil else { throw BenchError("warm-up write \(key) never reached B's watch; see \(b.logPath)") }
        }
    }

    func measure(writes: Int, run: Int) throws -> (total: [Double], afterCommit: [Double], commit: [Double]) {
        var total: [Double] = [], afterCommit: [Double] = [], commit: [Double] = []
        for i in 0..<writes {
            let key = "p\(run)-\(i)"
            let start = Clock.nanos()
            try store.set(Seeding.value(i, round: run), suite: Propagation.suite, key: key)
            let committed = Clock.nanos()
            guard let arrived = board.wait(for: key, seconds: 10) else { throw BenchError("write \(key) never reached B") }
            total.append(Double(arrived &- start) / 1e6)
            afterCommit.append(Double(Int64(bitPattern: arrived &- committed)) / 1e6)
            commit.append(Double(committed - start) / 1e6)
        }
        return (total, afterCommit, commit)
    }

    /// Writes through A's daemon's control socket: the clock runs from just before the request is sent to
    /// B's watch line; each write waits for its acknowledgement too before the next.
    func measureThroughControlSocket(writes: Int, run: Int) throws -> [Double] {
        guard let connection = ControlConnection(home: a.home) else { throw BenchError("no daemon answers on A's control socket; see \(a.logPath)") }
        var total: [Double] = []
        for i in 0..<writes {
            let key = "c\(run)-\(i)"
            guard case .string(let value) = Seeding.value(i, round: run) else { continue }
            let request = #"{"command":"set","suite":"\#(Propagation.suite)","key":"\#(key)","type":"string","value":"\#(value)"}"#
            let start = Clock.nanos()
            guard let answer = connection.request(request), answer.hasPrefix(#"{"ok":true"#) else {
                throw BenchError("A's daemon did not acknowledge \(key); see \(a.logPath)")
            }
            guard let arrived = board.wait(for: key, seconds: 10) else { throw BenchError("write \(key) never reached B") }
            total.append(Double(arrived &- start) / 1e6)
        }
        return total
    }

    func stop() {
        watch.stop()
        a.stop()
        b.stop()
    }
}

/// A Redis primary, a replica of it, and a subscriber to the replica's keyspace notifications.
private final class RedisPair {
    let primary: RedisServer, replica: RedisServer
    let writer: RESPClient
    let board = ArrivalBoard()

    /// `durable`: the primary fsyncs each write before it answers and replicates it.
    init(_ bench: Bench, durable: Bool = false) throws {
        let name = durable ? "redis-durable" : "redis"
        primary = try RedisServer(directory: bench.scratch(name + "-primary"), extra: durable ? ["--appendonly", "yes", "--appendfsync", "always"] : [])
        replica = try RedisServer(directory: bench.scratch(name + "-replica"), replicaOfPort: primary.port,
                                  extra: ["--notify-keyspace-events", "KA"])
        let probe = try replica.client()
        let deadline = Deadline(seconds: 20, "Redis replica to sync")
        while try replica.info("replication", using: probe)["master_link_status"] != "up" { try deadline.check(); usleep(10_000) }
        writer = try primary.client()
        let subscriber = try replica.client()
        try subscriber.send([["PSUBSCRIBE", "__keyspace@0__:*"]])
        _ = try subscriber.readReply()
        let board = self.board
        Thread.detachNewThread {
            while true {
                guard let reply = try? subscriber.readReply() else { return }
                let at = Clock.nanos()
                // ["pmessage", pattern, "__keyspace@0__:KEY", event]
                if case .array(let items?) = reply, items.count == 4, let channel = items[2].text,
                   let colon = channel.firstIndex(of: ":") {
                    board.post(String(channel[channel.index(after: colon)...]), at: at)
                }
            }
        }
        for i in 0..<20 {
            let key = "warm-\(i)"
            try writer.command("SET", key, "x")
            guard board.wait(for: key, seconds: 10) != nil else { throw BenchError("Redis warm-up write never reached the replica") }
        }
    }

    func measure(writes: Int, run: Int) throws -> [Double] {
        var total: [Double] = []
        for i in 0..<writes {
            let key = "p\(run)-\(i)"
            guard case .string(let value) = Seeding.value(i, round: run) else { continue }
            let start = Clock.nanos()
            try writer.command("SET", key, value)
            guard let arrived = board.wait(for: key, seconds: 10) else { throw BenchError("Redis write \(key) never reached the replica") }
            total.append(Double(arrived &- start) / 1e6)
        }
        return total
    }

    func stop() {
        replica.stop()
        primary.stop()
    }
}
