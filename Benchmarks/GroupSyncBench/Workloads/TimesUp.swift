import Foundation

/// Workload 6: a spend on A that empties the balance, until B's notification server (a recording server on
/// B's own private session bus) receives "Time's up"; p50 and p99 over the rounds (100, or 20 with --quick).
/// Each round earns a minute on A (ending the previous episode, which closes the notification) and spends it.
/// Measured from the moment `groupsync balance spend` returns on A (the spend is durable) until the server
/// has logged the `Notify` call.
enum TimesUp {
    static let workload = "6. Time's up everywhere"

    static func run(_ bench: Bench) throws {
        let balance = try Subprocess.run(bench.binary, ["balance", "--help"])
        guard balance.status == 0 else {
            bench.results.skip(workload, "not available: `groupsync balance --help` exits \(balance.status)")
            return
        }
        let fixtures = bench.options.root + "/Tests/GroupSyncNotifyTests/Fixtures"
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon"),
              FileManager.default.fileExists(atPath: fixtures + "/recording_notification_server.py"),
              (try? Subprocess.run("/usr/bin/python3", ["-c", "import dbus, gi"]).status) == 0 else {
            bench.results.skip(workload, "needs dbus-daemon (apt: dbus) and /usr/bin/python3 with python3-dbus and python3-gi")
            return
        }

        // B's private session bus and the recording server on it.
        let bus = try Subprocess("/usr/bin/dbus-daemon", ["--config-file=\(fixtures)/session-bus.conf", "--nofork", "--print-address=1"], stdout: .pipe)
        defer { _ = bus.stop(signal: SIGKILL) }
        guard let address = firstLine(bus.stdoutFD), !address.isEmpty else { throw BenchError("dbus-daemon gave no address") }
        let log = bench.scratch("notify-calls.jsonl")
        setenv("DBUS_SESSION_BUS_ADDRESS", address, 1)
        defer { unsetenv("DBUS_SESSION_BUS_ADDRESS") }
        let server = try Subprocess("/usr/bin/python3", ["\(fixtures)/recording_notification_server.py", "--log", log], stdout: .pipe)
        defer { _ = server.stop(signal: SIGKILL) }
        guard firstLine(server.stdoutFD)?.hasPrefix("ready ") == true else { throw BenchError("the recording notification server did not start") }

        let a = try bench.device("timesup-a"), b = try bench.device("timesup-b")
        try b.start()  // inherits the bus address: B shows its notifications there
        unsetenv("DBUS_SESSION_BUS_ADDRESS")
        try a.start()
        defer { a.stop(); b.stop() }
        try a.pair(with: b, viaPort: b.port)
        try b.pair(with: a, viaPort: a.port)
        try a.waitConnected(1)

        let rounds = bench.options.quick ? 20 : 100
        var latencies: [Double] = []
        var respends = 0
        var shown = timesUpCount(log)
        for round in 0..<rounds {
            guard try a.cli("balance", "earn", "1").status == 0 else { throw BenchError("balance earn failed in round \(round)") }
            // A spend takes what A holds or can get from B within its wait; when B's share is late, the next
            // spend takes the rest. The clock starts when the spend that empties the balance returns.
            var spend = try a.cli("balance", "spend", "1")
            var spent = Clock.nanos()
            var attempts = 1
            while spend.status == 0 && !spend.stdout.contains("; 0 min remaining") && attempts < 5 {
                spend = try a.cli("balance", "spend", "1")
                spent = Clock.nanos()
                attempts += 1
            }
            if attempts > 1 { respends += 1 }
            guard spend.status == 0 else { throw BenchError("balance spend failed in round \(round)") }
            let deadline = Deadline(seconds: 10, "time's up on B in round \(round)")
            while timesUpCount(log) <= shown {
                do { try deadline.check() } catch {
                    let state = (try? a.cli("balance", "--json").stdout) ?? "?"
                    throw BenchError("\(error); spend said: \(spend.stdout.trimmingCharacters(in: .whitespacesAndNewlines)); balance on A: \(state)")
                }
                usleep(200)
            }
            latencies.append(Clock.millis(since: spent))
            shown += 1
        }
        let how = "A earns 1 min then `groupsync balance spend 1` empties the balance; timed from the spend's return "
            + "to the Notify(\"Time's up\") call logged by the recording server on B's own session bus; \(rounds) rounds."
        bench.results.add(Row(workload: workload, metric: "p50, spend on A → \"time's up\" at B's notification server", unit: "ms",
                              groupsyncRuns: [Stats.median(latencies)], target: nil, how: how))
        bench.results.add(Row(workload: workload, metric: "p99, spend on A → \"time's up\" at B's notification server", unit: "ms",
                              groupsyncRuns: [Stats.percentile(latencies, 99)], target: .atMost(100, "≤ 100 ms"), how: how,
                              note: respends > 0 ? "in \(respends) of \(rounds) rounds the first spend got only part of B's share within its wait and a second spend emptied the balance" : nil))
    }

    /// How many "Time's up" notifications the recording server has been asked to show.
    private static func timesUpCount(_ log: String) -> Int {
        guard let text = try? String(contentsOfFile: log, encoding: .utf8) else { return 0 }
        return text.components(separatedBy: "\"summary\": \"Time's up\"").count - 1
    }

    private static func firstLine(_ fd: Int32?) -> String? {
        guard let fd else { return nil }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1 {
            if byte == 10 { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }
}
