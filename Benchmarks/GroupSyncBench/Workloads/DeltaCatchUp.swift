import Foundation
import GroupSyncCore
import GroupSyncStore
import GroupSyncTransport

/// Workload 3: a device that was offline while k of N keys changed reconnects; bytes and time until it is
/// current. Peer: the Yjs state-vector diff for the same k changes among N keys. Over a grid of k and N, to
/// show the cost follows k and not N.
///
/// A and B start in sync (the same N entries seeded into both stores in process, and each one's watermark of
/// the other set to the other's head, as a finished sync leaves them), paired both ways through counting
/// proxies. Each round: stop B's daemon, write k keys on A with `Store.set` (durable local writes, spread over
/// the key space), start B again and time from its first proxied TCP connection until B's store has applied
/// the k entries. "After the handshake" subtracts the median of a mutual TLS 1.3 handshake between the same
/// two identities, measured in process over loopback with the same transport code.
enum DeltaCatchUp {
    struct Point { var n: Int; var k: Int; var millis: [Double]; var bytes: [Double]; var connections: [Double] }

    /// Cold reconnects at each size for the headline k (the other k take `runs`: 3 at the headline size, 2 elsewhere).
    static let headlineRounds = 5

    static func run(_ bench: Bench) throws {
        let workload = "3. Delta catch-up"
        var points: [Point] = []
        var baselines: [Int: [Double]] = [:]
        var handshake: [Double] = []
        var warm: [Point] = []
        for n in bench.options.deltaSizes {
            let runs = n == bench.n ? bench.runs : max(1, min(bench.runs, 2))
            Progress.say("  N = \(n): seeding two stores")
            let pair = try SyncedPair(bench, n: n)
            defer { pair.stop() }
            if handshake.isEmpty { handshake = try handshakeMillis(pair.a, pair.b, count: bench.options.handshakes) }
            baselines[n] = try (0..<runs).map { _ in try pair.reconnect(changes: 0).bytes }
            for k in bench.options.deltaKs where k <= n {
                var point = Point(n: n, k: k, millis: [], bytes: [], connections: [])
                // The headline k feeds two targets, one of them the ratio of two sizes' medians of a few ms each:
                // five cold reconnects at every size, so that one slow round does not decide it.
                for _ in 0..<(k == bench.options.headlineK ? max(runs, Self.headlineRounds) : runs) {
                    let round = try pair.reconnect(changes: k, profile: k == bench.options.headlineK ? (bench, "delta-\(n)-\(k)") : nil)
                    point.millis.append(round.millis)
                    point.bytes.append(round.bytes)
                    point.connections.append(Double(round.connections))
                }
                Progress.say("    k = \(k): \(Format.value(Stats.median(point.millis), "ms")) from connect, \(Format.bytes(Stats.median(point.bytes)))")
                points.append(point)
            }
            // The same reconnect with both daemons kept running: the network between them is cut and healed.
            let k = bench.options.headlineK
            if k <= n {
                var point = Point(n: n, k: k, millis: [], bytes: [], connections: [])
                for _ in 0..<runs {
                    let round = try pair.partitionAndHeal(changes: k)
                    point.millis.append(round.millis)
                    point.bytes.append(round.bytes)
                    point.connections.append(Double(round.connections))
                }
                Progress.say("    k = \(k), warm (partition healed): \(Format.value(Stats.median(point.millis), "ms")) from connect, \(Format.bytes(Stats.median(point.bytes)))")
                warm.append(point)
            }
        }
        let handshakeMedian = Stats.median(handshake)

        // Yjs over the same grid.
        var yjs: [String: (bytes: [Double], millis: [Double])] = [:]
        if let peer = bench.yjs {
            let cases = points.map { YjsPeer.Case(kind: "delta", n: $0.n, k: $0.k, runs: $0.millis.count) }
            for (point, result) in zip(points, try peer.run(cases)) {
                let bytes = zip(YjsPeer.numbers(result, "diff_bytes"), YjsPeer.numbers(result, "sv_bytes")).map { $0 + $1 }
                let millis = zip(YjsPeer.numbers(result, "encode_ms"), YjsPeer.numbers(result, "apply_ms")).map { $0 + $1 }
                yjs["\(point.n)/\(point.k)"] = (bytes, millis)
            }
        }

        // The chart: k = headline against N.
        for point in points where point.k == bench.options.headlineK {
            bench.results.point("GroupSync delta catch-up, k=\(point.k)", n: point.n, millis: Stats.median(point.millis), bytes: Stats.median(point.bytes))
            if let y = yjs["\(point.n)/\(point.k)"] {
                bench.results.point("Yjs state-vector diff, k=\(point.k)", n: point.n, millis: Stats.median(y.millis), bytes: Stats.median(y.bytes))
            }
        }
        bench.results.extra["deltaGrid"] = points.map { point -> [String: Any] in
            let y = yjs["\(point.n)/\(point.k)"]
            return ["n": point.n, "k": point.k, "millisFromConnect": point.millis, "bytes": point.bytes,
                    "connectionsPerRound": point.connections, "sessionBaselineBytes": baselines[point.n] ?? [],
                    "yjsBytes": y?.bytes ?? [], "yjsMillis": y?.millis ?? []]
        }
        bench.results.extra["deltaWarm"] = warm.map { ["n": $0.n, "k": $0.k, "millisFromConnect": $0.millis, "bytes": $0.bytes, "connectionsPerRound": $0.connections] }
        bench.results.extra["tlsHandshakeMillis"] = handshake
        bench.results.sections.append(grid(points, warm: warm, baselines: baselines, yjs: yjs, handshake: handshakeMedian))

        let k = bench.options.headlineK
        guard let headline = points.first(where: { $0.n == bench.n && $0.k == k }) else { return }
        let y = yjs["\(bench.n)/\(k)"]
        let label = "k = \(k) of N = \(Format.grouped(bench.n))"
        let how = "Gross bytes through both proxies during the reconnect (TLS handshake, hello, batches, acks, ping/pong), median of \(headline.bytes.count) rounds. Yjs: `get_state()` of the offline Doc plus `get_update(state)` of the current one, after the same k keys changed (pycrdt, in memory)."
        bench.results.add(Row(workload: workload, metric: "bytes on the wire, \(label)", unit: "bytes",
                              groupsyncRuns: headline.bytes, peerName: y == nil ? nil : "Yjs state vector + diff", peerRuns: y?.bytes ?? [],
                              target: .ratioAtMost(1, "≤ Yjs diff"), how: how))
        let baseline = Stats.median(baselines[bench.n] ?? [])
        bench.results.add(Row(workload: workload, metric: "bytes beyond an empty reconnect, \(label)", unit: "bytes",
                              groupsyncRuns: headline.bytes.map { $0 - baseline }, peerName: y == nil ? nil : "Yjs state vector + diff", peerRuns: y?.bytes ?? [],
                              target: nil, how: "The same rounds minus the median bytes of a reconnect with nothing to send (\(Format.bytes(baseline)): the TLS handshake with both certificates, hellos, empty first batches, acks, the first ping/pong): what the k changes themselves cost on the wire."))
        bench.results.add(Row(workload: workload, metric: "time after the handshake until current, \(label)", unit: "ms",
                              groupsyncRuns: headline.millis.map { $0 - handshakeMedian }, peerName: y == nil ? nil : "Yjs encode + apply", peerRuns: y?.millis ?? [],
                              target: .atMost(10, "< 10 ms"),
                              how: "Time from B's first proxied TCP connection until B's store has the k entries, minus the median in-process TLS handshake (\(Format.value(handshakeMedian, "ms")))."))
        bench.results.add(Row(workload: workload, metric: "time from TCP connect until current, \(label)", unit: "ms",
                              groupsyncRuns: headline.millis, target: nil, how: "As above, the handshake included."))
        if let warmHeadline = warm.first(where: { $0.n == bench.n }) {
            bench.results.add(Row(workload: workload, metric: "time after the handshake until current, warm daemons (a partition healed), \(label)", unit: "ms",
                                  groupsyncRuns: warmHeadline.millis.map { $0 - handshakeMedian }, peerName: y == nil ? nil : "Yjs encode + apply", peerRuns: y?.millis ?? [],
                                  target: .atMost(10, "< 10 ms"),
                                  how: "Both daemons keep running: the proxies cut the connection and refuse new ones while A writes the k keys, then let the daemons' own redial through; time from that first TCP connection until B holds the k entries, minus the handshake median. The first \"time after the handshake\" row restarts B's daemon instead, so it includes a newly started process's first transaction."))
        }
        bench.results.add(Row(workload: workload, metric: "mutual TLS 1.3 handshake (Ed25519, loopback)", unit: "ms",
                              groupsyncRuns: handshake, target: nil,
                              how: "\(handshake.count) handshakes between A's and B's identities with GroupSync's own transport (TLSListener/TLSConnection), in this process: from TCP connect to the client's handshake completing. The issue's reference: about 3 ms."))
        let atK = points.filter { $0.k == k }.sorted { $0.n < $1.n }
        if let smallest = atK.first, let largest = atK.last, largest.n > smallest.n {
            let timeRatio = Stats.median(largest.millis) / Stats.median(smallest.millis)
            let bytesRatio = Stats.median(largest.bytes) / Stats.median(smallest.bytes)
            bench.results.add(Row(workload: workload, metric: "flat in N: time at N = \(Format.grouped(largest.n)) ÷ time at N = \(Format.grouped(smallest.n)), k = \(k)", unit: "×",
                                  groupsyncRuns: [timeRatio], target: .atMost(1.5, "≤ 1.5× over \(largest.n / smallest.n)× the keys"),
                                  how: "Ratio of the median times from TCP connect (\(largest.millis.count) and \(smallest.millis.count) cold reconnects); bytes ratio \(Format.ratio(bytesRatio)). Flat means the reconnect reads only the changes after the watermark, whatever the store's size."))
        }
    }

    /// The per-(N, k) table, as its own section of results.md.
    static func grid(_ points: [Point], warm: [Point], baselines: [Int: [Double]], yjs: [String: (bytes: [Double], millis: [Double])], handshake: Double) -> String {
        var lines = ["## Delta catch-up grid", "",
                     "Medians. Time is from B's first TCP connection until B holds the k changes; the in-process handshake median is \(Format.value(handshake, "ms")). Empty reconnect = bytes of a reconnect with nothing to send.", "",
                     "| N | k | GroupSync time | GroupSync bytes | empty reconnect | Yjs sv + diff bytes | Yjs encode + apply |",
                     "|---|---|---|---|---|---|---|"]
        for point in points {
            let y = yjs["\(point.n)/\(point.k)"]
            lines.append("| \(Format.grouped(point.n)) | \(Format.grouped(point.k)) | \(Format.value(Stats.median(point.millis), "ms")) | \(Format.bytes(Stats.median(point.bytes))) | \(Format.bytes(Stats.median(baselines[point.n] ?? []))) | \(y.map { Format.bytes(Stats.median($0.bytes)) } ?? "—") | \(y.map { Format.value(Stats.median($0.millis), "ms") } ?? "—") |")
        }
        if !warm.isEmpty {
            lines += ["", "Warm reconnect (both daemons running, the connection cut and healed by the proxies):", "",
                      "| N | k | GroupSync time | GroupSync bytes |", "|---|---|---|---|"]
            for point in warm {
                lines.append("| \(Format.grouped(point.n)) | \(Format.grouped(point.k)) | \(Format.value(Stats.median(point.millis), "ms")) | \(Format.bytes(Stats.median(point.bytes))) |")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Mutual TLS 1.3 handshakes between two devices' identities, in process, with GroupSync's transport.
    static func handshakeMillis(_ a: BenchDevice, _ b: BenchDevice, count: Int) throws -> [Double] {
        func certificate(_ device: BenchDevice) throws -> DeviceCertificate {
            try DeviceCertificate(certificatePEM: String(contentsOfFile: device.home.certificatePath, encoding: .utf8),
                                  privateKeyPEM: String(contentsOfFile: device.home.privateKeyPath, encoding: .utf8))
        }
        let (certA, certB) = (try certificate(a), try certificate(b))
        let serverContext = try TLSContext(certificate: certA) { $0 == certB.deviceID }
        let clientContext = try TLSContext(certificate: certB) { $0 == certA.deviceID }
        let listener = try TLSListener.bind(host: "127.0.0.1", port: 0, context: serverContext)
        defer { listener.close() }
        Thread.detachNewThread {
            while let pending = try? listener.accept() {
                if let connection = try? pending.handshake(timeout: .seconds(10)) {
                    // The client waits for one byte, so its time covers the server accepting it too.
                    try? connection.writeAll([1])
                    connection.close()
                } else {
                    pending.close()
                }
            }
        }
        var millis: [Double] = []
        for _ in 0..<(count + 3) {
            let start = Clock.nanos()
            let connection = try TLSConnection.connect(host: "127.0.0.1", port: listener.port, context: clientContext,
                                                       expectedPeer: certA.deviceID, timeout: .seconds(10))
            _ = try connection.read(upTo: 1, timeout: .seconds(10))
            millis.append(Clock.millis(since: start))
            connection.close()
        }
        return Array(millis.dropFirst(3))  // the first few warm up OpenSSL
    }
}

/// Two devices holding the same N keys, in sync, paired through counting proxies.
private final class SyncedPair {
    let a: BenchDevice, b: BenchDevice
    let storeA: Store, storeB: Store
    let proxyA: CountingProxy, proxyB: CountingProxy
    let n: Int
    private var round = 0

    init(_ bench: Bench, n: Int) throws {
        self.n = n
        a = try bench.device("delta-a")
        b = try bench.device("delta-b")
        storeA = try a.openStore()
        storeB = try b.openStore(signalCommits: false)
        try Seeding.fill([storeA, storeB], count: n, origin: a.id)
        try Seeding.markInSync((a, storeA), (b, storeB))
        proxyA = try CountingProxy()
        proxyB = try CountingProxy()
        try a.pair(with: b, viaPort: proxyB.port)
        try b.pair(with: a, viaPort: proxyA.port)
        try a.start()
        proxyA.setUpstream(a.port)
        try b.start()
        proxyB.setUpstream(b.port)
        try b.waitConnected(1)
        // A first session that sends nothing (both sides are current): it leaves the watermarks as they were.
        usleep(300_000)
        let head = try storeB.lastSequence()
        guard head == Int64(n) else { throw BenchError("B's store moved from \(n) to \(head) on first contact: the pair was not in sync") }
    }

    /// Stops B, writes `changes` keys on A, restarts B; the time from B's first connection until B holds
    /// them, and the bytes both ways.
    func reconnect(changes: Int, profile: (Bench, String)? = nil) throws -> (millis: Double, bytes: Double, connections: Int) {
        b.stop()
        let expected = try writeChangesOnA(changes)
        let watcher = try ChangeWatcher(home: b.home)
        proxyA.reset()
        proxyB.reset()
        let launch = Clock.nanos()
        try b.start(waitReady: false)
        let profiler = profile.flatMap { Profiler.start($0.0, name: $0.1, pids: [a.pid, b.pid].compactMap { $0 }) }
        defer { profiler?.stop() }
        var millis = 0.0
        if changes > 0 {
            try awaitB(expected, watcher: watcher, "B to catch up \(changes) changes")
            let done = Clock.nanos()
            let first = (proxyA.connections + proxyB.connections).filter { $0 >= launch }.min() ?? launch
            millis = Double(done - first) / 1e6
        }
        // Let the last acks and the first ping/pong pass before reading the counters.
        usleep(changes == 0 ? 600_000 : 300_000)
        let connections = (proxyA.connections + proxyB.connections).filter { $0 >= launch }.count
        return (millis, Double(proxyA.bytes + proxyB.bytes), connections)
    }

    /// Cuts the link between the running daemons (the proxies drop the connection and refuse new ones),
    /// writes `changes` keys on A, heals the link and times from the daemons' first new connection until B
    /// holds them.
    func partitionAndHeal(changes: Int) throws -> (millis: Double, bytes: Double, connections: Int) {
        for proxy in [proxyA, proxyB] { proxy.setUpstream(nil); proxy.dropConnections() }
        let apart = Deadline(seconds: 20, "the daemons to notice the partition")
        while a.connectedPeers() > 0 || b.connectedPeers() > 0 { try apart.check(); usleep(10_000) }
        let expected = try writeChangesOnA(changes)
        let watcher = try ChangeWatcher(home: b.home)
        proxyA.reset()
        proxyB.reset()
        let healed = Clock.nanos()
        proxyA.setUpstream(a.port)
        proxyB.setUpstream(b.port)
        // The dialers retry with backoff (0.5 s doubling, jittered), so the reconnect comes within seconds.
        try awaitB(expected, watcher: watcher, "B to catch up \(changes) changes after the partition")
        let done = Clock.nanos()
        let first = (proxyA.connections + proxyB.connections).filter { $0 >= healed }.min() ?? healed
        usleep(300_000)
        let connections = (proxyA.connections + proxyB.connections).filter { $0 >= healed }.count
        return (Double(done - first) / 1e6, Double(proxyA.bytes + proxyB.bytes), connections)
    }

    /// Writes `changes` keys spread over the store on A (a fresh round of values each time); returns the
    /// sequence B's store reaches once it holds them.
    private func writeChangesOnA(_ changes: Int) throws -> Int64 {
        round += 1
        let step = max(1, n / max(changes, 1))
        for j in 0..<changes {
            let index = (j * step + round) % n
            try storeA.set(Seeding.value(index, round: round), suite: Seeding.suite, key: Seeding.key(index))
        }
        return try storeB.lastSequence() + Int64(changes)
    }

    /// Waits (on B's change signal) until B's store reaches `expected`.
    private func awaitB(_ expected: Int64, watcher: ChangeWatcher, _ what: String) throws {
        let deadline = Deadline(seconds: 120, what)
        while try storeB.lastSequence() < expected {
            try deadline.check()
            _ = watcher.wait(timeoutMillis: 50)
        }
    }

    func stop() {
        a.stop()
        b.stop()
        proxyA.stop()
        proxyB.stop()
    }
}
