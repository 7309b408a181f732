import Foundation
import GroupSyncCore
import GroupSyncStore

/// Workload 2: a fresh device pairs with one that holds N keys; time until it holds all of them, and bytes on
/// the wire. Peers: a Redis replica's full resync; a Yjs full-state update (pycrdt, in process); and the
/// physical floor, raw SQLite upserts of N rows with fsync per transaction of a catch-up batch's size.
enum BulkCatchUp {
    /// Rows per transaction for the floor and the store layer: what a catch-up commits at a time.
    static let batch = SessionConfiguration().batchSize

    static func run(_ bench: Bench) throws {
        let workload = "2. Bulk catch-up"
        for n in bench.options.bulkSizes {
            let headline = n == bench.n
            let runs = headline ? bench.runs : 1
            Progress.say("  N = \(n), \(runs) run(s)")
            let groupsync = try measureGroupSync(bench, n: n, runs: runs)
            let redis = bench.redisAvailable ? try measureRedis(bench, n: n, runs: runs) : nil
            var floor: [Double] = []
            var storeLayer: [Double] = []
            for _ in 0..<runs {
                floor.append(try SQLiteFloor.upsertSeconds(count: n, batch: batch, path: bench.scratch("floor") + ".db") * 1000)
                storeLayer.append(try storeApplyMillis(bench, n: n))
            }
            let yjs = try bench.yjs?.run([YjsPeer.Case(kind: "full", n: n, runs: runs)]).first
            let yjsMillis = yjs.map { r in zip(YjsPeer.numbers(r, "encode_ms"), YjsPeer.numbers(r, "apply_ms")).map { $0 + $1 } } ?? []
            let yjsBytes = yjs.map { YjsPeer.numbers($0, "bytes") } ?? []

            bench.results.point("GroupSync bulk catch-up", n: n, millis: Stats.median(groupsync.millis), bytes: Stats.median(groupsync.bytes))
            if let redis { bench.results.point("Redis full resync", n: n, millis: Stats.median(redis.millis), bytes: Stats.median(redis.bytes)) }
            if !yjsMillis.isEmpty { bench.results.point("Yjs full-state update", n: n, millis: Stats.median(yjsMillis), bytes: Stats.median(yjsBytes)) }
            bench.results.point("SQLite upsert floor", n: n, millis: Stats.median(floor), bytes: nil)
            bench.results.extra["bulk-\(n)"] = ["groupsyncMillis": groupsync.millis, "groupsyncBytes": groupsync.bytes,
                                                "groupsyncFromLaunchMillis": groupsync.fromLaunch,
                                                "senderCPUMillis": groupsync.cpuA, "receiverCPUMillis": groupsync.cpuB,
                                                "redisMillis": redis?.millis ?? [], "redisBytes": redis?.bytes ?? [],
                                                "sqliteFloorMillis": floor, "storeApplyMillis": storeLayer,
                                                "yjsMillis": yjsMillis, "yjsBytes": yjsBytes]
            guard headline else { continue }

            let how = "A holds N keys (seeded in process); a fresh device B is paired both ways through counting proxies; clock from the first TCP connection through a proxy to B's store holding N entries (B's `lastSequence`, read on each inotify change signal of B's home). Bytes: both directions of every proxied connection (TLS records, handshake included). \(runs) runs, a new B each."
            let redisHow = "Redis: primary holds the same N keys and values; a new replica (`--replicaof` the proxy, diskless sync, no delay) is started; clock from the proxy's first connection to INFO reporting the link up and the sync done, polled every ms; bytes through the proxy."
            let nText = Format.grouped(n)
            bench.results.add(Row(workload: workload, metric: "time until a fresh device holds \(nText) keys", unit: "ms",
                                  groupsyncRuns: groupsync.millis, peerName: redis == nil ? nil : "Redis full resync", peerRuns: redis?.millis ?? [],
                                  target: .ratioAtMost(3, "≤ 3× Redis full resync"), how: how + " " + redisHow))
            bench.results.notes.append("Bulk catch-up of \(nText) keys: the sender's daemon used \(Format.value(Stats.median(groupsync.cpuA), "ms")) of CPU during it and the receiver's \(Format.value(Stats.median(groupsync.cpuB), "ms")) (since its launch), against \(Format.value(Stats.median(groupsync.millis), "ms")) of wall time: the rest is waiting (fsyncs, round trips under the 4-batch window).")
            bench.results.add(Row(workload: workload, metric: "same, against the SQLite upsert floor", unit: "ms",
                                  groupsyncRuns: groupsync.millis, peerName: "SQLite upserts, \(Format.grouped(batch))/txn, FULL", peerRuns: floor,
                                  target: .ratioAtMost(2, "≤ 2× the SQLite floor"),
                                  how: "The floor: raw SQLite \(SQLiteFloor.version) upserts of the same N rows into a table shaped like the store's (WAL, synchronous=FULL, prepared statement, \(Format.grouped(batch)) rows per transaction, a catch-up batch), rows prepared before the clock starts; a new file each run."))
            bench.results.add(Row(workload: workload, metric: "bytes on the wire for \(nText) keys", unit: "bytes",
                                  groupsyncRuns: groupsync.bytes, peerName: redis == nil ? nil : "Redis full resync", peerRuns: redis?.bytes ?? [],
                                  target: nil, how: "As above; Redis's figure is its RDB snapshot plus the PSYNC handshake."))
            if !yjsBytes.isEmpty {
                bench.results.add(Row(workload: workload, metric: "bytes, against a Yjs full-state update", unit: "bytes",
                                      groupsyncRuns: groupsync.bytes, peerName: "Yjs (pycrdt) full update", peerRuns: yjsBytes, target: nil,
                                      how: "Yjs: `Doc.get_update()` of a Y.Map with the same N keys and values (an in-memory byte string: no transport, no disk)."))
                bench.results.add(Row(workload: workload, metric: "time, against a Yjs full-state encode + apply", unit: "ms",
                                      groupsyncRuns: groupsync.millis, peerName: "Yjs (pycrdt) full update", peerRuns: yjsMillis, target: nil,
                                      how: "Yjs: encode the full update and apply it to a new Doc, in one Python process; not durable, not networked."))
            }
            let rate = { (millis: [Double]) in millis.map { Double(n) / ($0 / 1000) } }
            bench.results.add(Row(workload: workload, metric: "store layer: Store.apply rows/s (\(Format.grouped(batch))/txn) vs raw SQLite", unit: "/s",
                                  groupsyncRuns: rate(storeLayer), peerName: "SQLite upserts, \(Format.grouped(batch))/txn", peerRuns: rate(floor),
                                  target: nil, how: "GroupSync's own store, in process, no network: `Store.apply` of the same N entries in batches of \(Format.grouped(batch)) (what a catch-up does per batch), against the raw SQLite floor. Reference figure from the issue: ~180k rows/s.",
                                  lowerIsBetter: false))
        }
    }

    /// A holds `n` keys; each run pairs a new, empty B with it and times the catch-up.
    static func measureGroupSync(_ bench: Bench, n: Int, runs: Int) throws -> (millis: [Double], bytes: [Double], fromLaunch: [Double], cpuA: [Double], cpuB: [Double]) {
        let a = try bench.device("bulk-a")
        let storeA = try a.openStore(signalCommits: false)
        try Seeding.fill([storeA], count: n, origin: a.id)
        try a.start()
        defer { a.stop() }
        let proxyA = try CountingProxy(upstream: a.port)
        defer { proxyA.stop() }
        var millis: [Double] = [], bytes: [Double] = [], fromLaunch: [Double] = [], cpuA: [Double] = [], cpuB: [Double] = []
        for _ in 0..<runs {
            let b = try bench.device("bulk-b")
            let proxyB = try CountingProxy()
            defer { proxyB.stop() }
            // B starts without waiting on its status (no CLI polling during the catch-up), so its port is
            // chosen here, after the proxies have theirs.
            let portB = try Sockets.freePort()
            proxyB.setUpstream(portB)
            try b.pair(with: a, viaPort: proxyA.port)
            try a.pair(with: b, viaPort: proxyB.port)
            let storeB = try b.openStore(signalCommits: false)
            let watcher = try ChangeWatcher(home: b.home)
            proxyA.reset()
            proxyB.reset()
            let senderBefore = try ProcStats.read(pid: a.pid!)
            let launch = Clock.nanos()
            try b.start(port: portB, waitReady: false)
            let profiler = Profiler.start(bench, name: "bulk-\(n)", pids: [a.pid, b.pid].compactMap { $0 })
            let deadline = Deadline(seconds: 600, "B to catch up \(n) keys")
            while try storeB.lastSequence() < Int64(n) {
                try deadline.check()
                _ = watcher.wait(timeoutMillis: 50)
            }
            let done = Clock.nanos()
            // Where the time went: CPU of the sender over the catch-up, and of the receiver since its launch.
            if let sender = try? ProcStats.read(pid: a.pid!), let receiver = try? ProcStats.read(pid: b.pid!) {
                cpuA.append(Double(sender.cpuNanos - senderBefore.cpuNanos) / 1e6)
                cpuB.append(Double(receiver.cpuNanos) / 1e6)
            }
            profiler?.stop()
            let firstConnection = (proxyA.connections + proxyB.connections).filter { $0 >= launch }.min() ?? launch
            millis.append(Double(done - firstConnection) / 1e6)
            fromLaunch.append(Double(done - launch) / 1e6)
            usleep(300_000)  // the last acknowledgements
            bytes.append(Double(proxyA.bytes + proxyB.bytes))
            Progress.say("    GroupSync: \(Format.value(millis.last!, "ms")) (\(Format.value(fromLaunch.last!, "ms")) from launch), \(Format.bytes(bytes.last!)); CPU sender \(Format.value(cpuA.last ?? .nan, "ms")), receiver \(Format.value(cpuB.last ?? .nan, "ms"))")
            b.stop()
            try a.unpair(b)
        }
        return (millis, bytes, fromLaunch, cpuA, cpuB)
    }

    /// A Redis primary holds `n` keys; each run starts a new replica through a counting proxy.
    static func measureRedis(_ bench: Bench, n: Int, runs: Int) throws -> (millis: [Double], bytes: [Double]) {
        let primary = try RedisServer(directory: bench.scratch("bulk-redis-primary"))
        defer { primary.stop() }
        try primary.fill(count: n)
        let proxy = try CountingProxy(upstream: primary.port)
        defer { proxy.stop() }
        var millis: [Double] = [], bytes: [Double] = []
        for _ in 0..<runs {
            proxy.reset()
            let launch = Clock.nanos()
            let replica = try RedisServer(directory: bench.scratch("bulk-redis-replica"), replicaOfPort: proxy.port)
            defer { replica.stop() }
            let probe = try replica.client()
            let deadline = Deadline(seconds: 300, "the Redis replica to sync \(n) keys")
            while true {
                let info = try replica.info("replication", using: probe)
                if info["master_link_status"] == "up" && info["master_sync_in_progress"] == "0" { break }
                try deadline.check()
                usleep(1000)
            }
            let done = Clock.nanos()
            guard case .integer(let size) = try probe.command("DBSIZE"), size >= n else { throw BenchError("the Redis replica synced but holds too few keys") }
            let first = proxy.connections.filter { $0 >= launch }.min() ?? launch
            millis.append(Double(done - first) / 1e6)
            usleep(300_000)
            bytes.append(Double(proxy.bytes))
            Progress.say("    Redis: \(Format.value(millis.last!, "ms")), \(Format.bytes(bytes.last!))")
        }
        return (millis, bytes)
    }

    /// GroupSync's store alone: `Store.apply` of `n` entries, a catch-up batch per transaction, into a new store.
    static func storeApplyMillis(_ bench: Bench, n: Int) throws -> Double {
        let origin = try DeviceID(bytes: [UInt8](repeating: 9, count: 32))
        let store = try Store(path: bench.scratch("store-layer") + ".db", device: try DeviceID(bytes: [UInt8](repeating: 8, count: 32)))
        let wall = Clock.wallMillis() - 60_000
        let batches = stride(from: 0, to: n, by: batch).map { Seeding.entries($0..<min(n, $0 + batch), origin: origin, wallMillis: wall) }
        let start = Clock.nanos()
        for batch in batches { _ = try store.apply(batch) }
        return Clock.millis(since: start)
    }
}
