import Foundation
import GroupSyncCore
import GroupSyncDaemon
import GroupSyncStore

/// Workload 4: acknowledged durable writes per second from 8 concurrent clients, and batched writes per second.
///
/// - 8 clients as `groupsync set` processes: what a shell script or an app calling the CLI gets.
/// - 8 clients in process: 8 threads, each with its own `Store` (its own SQLite connection, as 8 app
///   processes linking the library would have), each calling `Store.set` in a loop.
/// - 8 clients on the daemon's control socket: 8 threads, each with its own connection (as 8 app processes
///   would hold), sending `set` and waiting for its acknowledgement — the daemon group-commits whatever is
///   pending, one transaction and one fsync for all. Also with 16 writes in flight per client (pipelined on
///   the one connection, each still acknowledged only once durable), which an app streaming writes does.
/// - Batched: the figure uses `Store.apply` — the replication path, which merges a batch in one transaction,
///   chosen before the local batch API `Store.write` existed and kept so the figures stay comparable — with
///   entries stamped by the bench (a `HybridClock` of its own, origin = this device), 1,000 per transaction.
/// Peers: Redis with `appendonly yes, appendfsync always` (each write acknowledged after fsync) driven by
/// 8 client threads doing SET; raw SQLite upserts with 1,000 rows per transaction for the batch.
/// Except for the control-socket rows, no daemon runs on the writing home: this is the store's own speed.
enum LocalWrites {
    static let clients = 8

    static func run(_ bench: Bench) throws {
        let workload = "4. Local writes"
        let seconds = bench.options.writeSeconds
        var cli: [Double] = [], library: [Double] = [], batched: [Double] = [], redis: [Double] = [], floor: [Double] = []
        var libraryLatencyP50: [Double] = [], single: [Double] = [], singleP50: [Double] = [], singleP99: [Double] = []
        var control: [Double] = [], controlP50: [Double] = [], pipelined: [Double] = []
        let redisServer = bench.redisAvailable
            ? try RedisServer(directory: bench.scratch("writes-redis"), extra: ["--appendonly", "yes", "--appendfsync", "always"]) : nil
        defer { redisServer?.stop() }
        for run in 0..<bench.runs {
            let device = try bench.device("writes")
            cli.append(try cliRate(bench, device, seconds: seconds, run: run))
            let one = try libraryRate(device, clients: 1, seconds: seconds, run: run)
            single.append(one.rate)
            singleP50.append(one.p50)
            singleP99.append(one.p99)
            let inProcess = try libraryRate(device, clients: clients, seconds: seconds, run: run)
            library.append(inProcess.rate)
            libraryLatencyP50.append(inProcess.p50)
            let socket = try controlRate(bench, device, window: 1, seconds: seconds, run: run)
            control.append(socket.rate)
            controlP50.append(socket.p50)
            pipelined.append(try controlRate(bench, device, window: pipelineWindow, seconds: seconds, run: run).rate)
            batched.append(try batchRate(device, count: bench.n, run: run))
            floor.append(Double(bench.n) / (try SQLiteFloor.upsertSeconds(count: bench.n, batch: 1000, path: bench.scratch("writes-floor") + ".db")))
            if let redisServer { redis.append(try redisRate(redisServer, seconds: seconds, run: run)) }
            Progress.say("  run \(run + 1): CLI \(Format.value(cli.last!, "/s")), one client \(Format.value(single.last!, "/s")) (p50 \(Format.value(one.p50, "ms")), p99 \(Format.value(one.p99, "ms"))), in process \(Format.value(library.last!, "/s")), control socket \(Format.value(control.last!, "/s")) (\(pipelineWindow) in flight: \(Format.value(pipelined.last!, "/s"))), batched \(Format.value(batched.last!, "/s"))" + (redis.last.map { ", Redis AOF always \(Format.value($0, "/s"))" } ?? ""))
        }
        let redisName = redisServer == nil ? nil : "Redis, appendfsync always, 8 clients"
        bench.results.add(Row(workload: workload, metric: "durable writes/s, 8 clients running `groupsync set`", unit: "/s",
                              groupsyncRuns: cli, peerName: redisName, peerRuns: redis, target: .atLeast(20_000, "≥ 20,000/s"),
                              how: "8 threads each spawn `groupsync set SUITE KEY VALUE` (posix_spawn) one after another for \(Format.number(seconds, digits: 1)) s; writes whose process exited 0, divided by the elapsed time. Redis: 8 client threads each sending SET and waiting for its reply, for as long.",
                              lowerIsBetter: false))
        bench.results.add(Row(workload: workload, metric: "durable writes/s, 8 clients on the daemon's control socket (group commit)", unit: "/s",
                              groupsyncRuns: control, peerName: redisName, peerRuns: redis, target: .atLeast(20_000, "≥ 20,000/s"),
                              how: "A daemon runs on the home; 8 threads each hold a connection to its `control.sock` (ControlConnection) and send `{\"command\":\"set\",…}`, waiting for the acknowledgement, which the daemon sends once the write's transaction is fsynced; it commits every pending client's writes in one transaction (GroupCommitter). \(Format.number(seconds, digits: 1)) s per run. Median per-write latency \(Format.value(Stats.median(controlP50), "ms")). Redis: 8 threads, SET, one in flight each.",
                              lowerIsBetter: false))
        bench.results.add(Row(workload: workload, metric: "durable writes/s, 8 clients on the control socket, \(pipelineWindow) writes in flight each", unit: "/s",
                              groupsyncRuns: pipelined, peerName: redisName, peerRuns: redis, target: nil,
                              how: "As the row above, but each client sends \(pipelineWindow) `set` lines in one write and waits for their \(pipelineWindow) acknowledgements (each sent once durable) before the next \(pipelineWindow): an app streaming writes. The Redis figure beside it has one write in flight per client, so the ratio is not like for like.",
                              lowerIsBetter: false))
        bench.results.add(Row(workload: workload, metric: "durable writes/s, 8 clients calling Store.set in process", unit: "/s",
                              groupsyncRuns: library, peerName: redisName, peerRuns: redis, target: .atLeast(20_000, "≥ 20,000/s"),
                              how: "8 threads, each with its own Store (own SQLite connection), call `Store.set` in a loop for \(Format.number(seconds, digits: 1)) s; each return is an fsynced commit. Median per-write latency \(Format.value(Stats.median(libraryLatencyP50), "ms")).",
                              lowerIsBetter: false))
        bench.results.add(Row(workload: workload, metric: "durable writes/s, 1 client calling Store.set (no contention)", unit: "/s",
                              groupsyncRuns: single, target: nil,
                              how: "One thread, one Store, `Store.set` in a loop for as long: the fsync-bound speed of one writer, to compare with 8. Per-write latency p50 \(Format.value(Stats.median(singleP50), "ms")), p99 \(Format.value(Stats.median(singleP99), "ms")).",
                              lowerIsBetter: false))
        bench.results.add(Row(workload: workload, metric: "batched writes/s (Store.apply, 1,000 per transaction)", unit: "/s",
                              groupsyncRuns: batched, peerName: "SQLite upserts, 1,000/txn", peerRuns: floor, target: .atLeast(150_000, "≥ 150,000/s"),
                              how: "\(Format.grouped(bench.n)) new keys per run written with `Store.apply` in batches of 1,000 (one transaction each), entries stamped by the bench (the replication path; see README). Peer: raw SQLite upserts of as many rows, 1,000 per transaction.",
                              lowerIsBetter: false))
    }

    /// What one write of a closed-loop client came to.
    enum WriteOutcome { case acknowledged, failed, stop }

    /// `clients` threads, each writing `write(client, i)` for i = 0, 1, … and waiting for it, until `seconds`
    /// pass (or the write says stop). Returns acknowledged writes per second and their latencies in ms.
    static func closedLoop(clients: Int, seconds: Double, _ write: @escaping (_ client: Int, _ i: Int) -> WriteOutcome) -> (rate: Double, latencies: [Double]) {
        let counts = Counter()
        let latencies = Latencies()
        let start = Clock.nanos()
        let end = start + UInt64(seconds * 1e9)
        let group = DispatchGroup()
        for client in 0..<clients {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var i = 0
                var mine: [Double] = []
                loop: while Clock.nanos() < end {
                    let t0 = Clock.nanos()
                    switch write(client, i) {
                    case .acknowledged:
                        mine.append(Clock.millis(since: t0))
                        counts.add(1)
                    case .failed: break
                    case .stop: break loop
                    }
                    i += 1
                }
                latencies.add(mine)
            }
        }
        group.wait()
        return (Double(counts.value) / (Double(Clock.nanos() - start) / 1e9), latencies.all)
    }

    /// 8 threads spawning `groupsync set` back to back.
    static func cliRate(_ bench: Bench, _ device: BenchDevice, seconds: Double, run: Int) throws -> Double {
        closedLoop(clients: clients, seconds: seconds) { client, i in
            guard case .string(let value) = Seeding.value(i, round: run),
                  let process = try? Subprocess(bench.binary, ["--home", device.home.path, "set", Seeding.suite, "cli\(run)-c\(client)-\(i)", value]) else { return .stop }
            return process.wait() == 0 ? .acknowledged : .failed
        }.rate
    }

    /// 8 threads with their own Store each, calling `set` in a loop.
    static func libraryRate(_ device: BenchDevice, clients: Int, seconds: Double, run: Int) throws -> (rate: Double, p50: Double, p99: Double) {
        // Each Store is used by exactly one thread.
        let stores = try (0..<clients).map { _ in Unchecked(try device.openStore()) }
        let (rate, latencies) = closedLoop(clients: clients, seconds: seconds) { client, i in
            (try? stores[client].value.set(Seeding.value(i, round: run), suite: Seeding.suite, key: "lib\(run)-\(clients)c\(client)-\(i)")) != nil ? .acknowledged : .stop
        }
        return (rate, Stats.median(latencies), Stats.percentile(latencies, 99))
    }

    /// Writes each client of the control socket has in flight in the pipelined row.
    static let pipelineWindow = 16

    /// 8 threads, each with its own control-socket connection to a daemon on `device`, sending `window` sets
    /// at a time and waiting for their acknowledgements. Counts acknowledged writes.
    static func controlRate(_ bench: Bench, _ device: BenchDevice, window: Int, seconds: Double, run: Int) throws -> (rate: Double, p50: Double) {
        try device.start()
        defer { device.stop() }
        let profiler = run == 0 ? Profiler.start(bench, name: "control-socket-\(window)-in-flight", pids: [device.pid].compactMap { $0 }) : nil
        defer { profiler?.stop() }
        let connections = try (0..<clients).map { client in
            guard let connection = ControlConnection(home: device.home) else { throw BenchError("no daemon answers on \(device.name)'s control socket") }
            return Unchecked(connection)
        }
        let acknowledged = Counter()
        let start = Clock.nanos()
        let (_, latencies) = closedLoop(clients: clients, seconds: seconds) { client, i in
            let lines = (0..<window).map { j -> String in
                guard case .string(let value) = Seeding.value(i * window + j, round: run) else { return "" }
                return #"{"command":"set","suite":"\#(Seeding.suite)","key":"ctl\#(run)-w\#(window)-c\#(client)-\#(i)-\#(j)","type":"string","value":"\#(value)"}"#
            }
            guard let answers = connections[client].value.requests(lines) else { return .stop }
            let ok = answers.filter { $0.hasPrefix(#"{"ok":true"#) }.count
            acknowledged.add(ok)
            return ok == window ? .acknowledged : .failed
        }
        let elapsed = Double(Clock.nanos() - start) / 1e9
        return (Double(acknowledged.value) / elapsed, Stats.median(latencies))
    }

    /// `count` new keys through `Store.apply`, 1,000 per transaction.
    static func batchRate(_ device: BenchDevice, count: Int, run: Int) throws -> Double {
        let store = try device.openStore()
        var clock = HybridClock(last: try store.currentClock())
        let batches: [[Entry]] = stride(from: 0, to: count, by: 1000).map { start in
            (start..<min(count, start + 1000)).map { index in
                // Keys in index order, like the SQLite peer's: both fill the B-tree the same way.
                Entry(suite: Seeding.suite, key: "b\(run)-" + Seeding.key(index), value: Seeding.value(index, round: run),
                      version: Version(hlc: clock.tick(physicalMillis: Clock.wallMillis()), origin: device.id))
            }
        }
        let start = Clock.nanos()
        for batch in batches { _ = try store.apply(batch) }
        return Double(count) / (Double(Clock.nanos() - start) / 1e9)
    }

    /// 8 client threads, SET and wait for the reply, against a Redis that fsyncs before replying.
    static func redisRate(_ server: RedisServer, seconds: Double, run: Int) throws -> Double {
        let connections = try (0..<clients).map { _ in try server.client() }
        return closedLoop(clients: clients, seconds: seconds) { client, i in
            guard case .string(let value) = Seeding.value(i, round: run),
                  (try? connections[client].command("SET", "w\(run)-c\(client)-\(i)", value)) != nil else { return .stop }
            return .acknowledged
        }.rate
    }
}

/// Hands a value to exactly one other thread.
struct Unchecked<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add(_ n: Int) { lock.withLock { count += n } }
    var value: Int { lock.withLock { count } }
}

final class Latencies: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Double] = []
    func add(_ more: [Double]) { lock.withLock { values += more } }
    var all: [Double] { lock.withLock { values } }
}
