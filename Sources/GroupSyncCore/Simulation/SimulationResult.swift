/// What one seed did and whether every promise held.
public struct SimulationResult: Sendable {
    public var seed: UInt64
    public var replicas: Int
    /// Every broken promise, in the order found; empty when the seed passed.
    public var failures: [String] = []
    public var stats = SimulationStats()
    /// One line per event when `SimulationOptions.trace` is on.
    public var trace: [String] = []

    public var passed: Bool { failures.isEmpty }
}

/// Counts of what happened in a run, for the convergence report.
public struct SimulationStats: Sendable, Equatable {
    public var operations = 0
    public var events = 0
    public var framesDelivered = 0
    public var bytesDelivered = 0
    public var connections = 0
    public var drops = 0
    public var duplicates = 0
    public var reorders = 0
    public var delays = 0
    public var partitions = 0
    public var crashes = 0
    /// Crashes that struck between two transactions of one event (or before its frames were all written).
    public var midEventCrashes = 0
    public var clockJumps = 0
    public var clockSteps = 0
    /// Stores moved aside and refilled by their peers.
    public var storeResets = 0
    /// Power cuts that took a local write or a peer's batch already visible and forwarded, before its fsync ended.
    public var visibleWriteLosses = 0
    /// Batches whose entries a receiver refused because they were stamped too far ahead of its clock.
    public var refusals = 0
    /// Sessions that ended, by reason.
    public var closes: [String: Int] = [:]
    public var simulatedMillis: Int64 = 0
    /// From the end of the faults until every replica held the same store, or nil if they never did.
    public var convergeMillis: Int64?

    public init() {}

    public mutating func add(_ other: SimulationStats) {
        operations += other.operations
        events += other.events
        framesDelivered += other.framesDelivered
        bytesDelivered += other.bytesDelivered
        connections += other.connections
        drops += other.drops
        duplicates += other.duplicates
        reorders += other.reorders
        delays += other.delays
        partitions += other.partitions
        crashes += other.crashes
        midEventCrashes += other.midEventCrashes
        clockJumps += other.clockJumps
        clockSteps += other.clockSteps
        storeResets += other.storeResets
        visibleWriteLosses += other.visibleWriteLosses
        refusals += other.refusals
        for (reason, count) in other.closes { closes[reason, default: 0] += count }
        simulatedMillis += other.simulatedMillis
    }
}

/// Many seeds summed up: what `groupsync simulate` prints.
public struct SimulationReport: Sendable {
    public var options: SimulationOptions
    public var results: [SimulationResult] = []
    /// The options that made the scenario, as given on the command line (" --skew 400 --replicas 3"), which a
    /// replay of one seed needs too: without them `--seed N` runs another scenario (found by review).
    public var replayOptions: String

    public init(options: SimulationOptions, replayOptions: String = "") {
        self.options = options
        self.replayOptions = replayOptions
    }

    public var failed: [SimulationResult] { results.filter { !$0.passed } }

    public var totals: SimulationStats {
        var total = SimulationStats()
        for result in results { total.add(result.stats) }
        return total
    }

    /// Converge times after healing, in simulated milliseconds, of the seeds that converged.
    public var convergeTimes: [Int64] { results.compactMap(\.stats.convergeMillis).sorted() }

    public var text: String {
        let totals = self.totals
        let times = convergeTimes
        func percentile(_ p: Double) -> String {
            guard !times.isEmpty else { return "-" }
            return seconds(times[min(times.count - 1, Int(Double(times.count) * p))])
        }
        func seconds(_ millis: Int64) -> String {
            let tenths = (millis + 50) / 100
            return "\(tenths / 10).\(tenths % 10) s"
        }
        let sizes = results.map(\.replicas)
        let (fewest, most) = (sizes.min() ?? 0, sizes.max() ?? 0)
        var lines = [
            "simulated \(results.count) seed\(results.count == 1 ? "" : "s"), \(fewest == most ? "\(most)" : "\(fewest)–\(most)") replicas each, \(seconds(totals.simulatedMillis / max(1, Int64(results.count)))) of simulated time per seed on average",
            "converged: \(results.count - failed.count) of \(results.count)" + (failed.isEmpty ? "" : "  FAILED: \(failed.count)"),
            "time to converge after the faults stopped (simulated): median \(percentile(0.5)), p99 \(percentile(0.99)), max \(times.last.map(seconds) ?? "-")",
            "operations acknowledged: \(totals.operations); frames delivered: \(totals.framesDelivered) (\(totals.bytesDelivered / 1024) KiB); connections: \(totals.connections)",
            "faults: \(totals.partitions) partitions, \(totals.drops) dropped frames (connection reset), \(totals.duplicates) duplicated, \(totals.reorders) reordered, \(totals.delays) delayed, \(totals.crashes) crashes (\(totals.midEventCrashes) mid-event), \(totals.clockJumps) clock jumps, \(totals.clockSteps) clock steps, \(totals.storeResets) stores moved aside, \(totals.visibleWriteLosses) visible writes or batches lost to a power cut",
            "refused batches (clock ahead, retried later): \(totals.refusals)",
            "sessions ended: " + totals.closes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "),
        ]
        for result in failed {
            lines.append("")
            lines.append("seed \(result.seed) FAILED (\(result.replicas) replicas): replay with --seed \(result.seed)\(replayOptions)")
            for failure in result.failures.prefix(10) { lines.append("  - \(failure)") }
            if result.failures.count > 10 { lines.append("  … and \(result.failures.count - 10) more") }
        }
        return lines.joined(separator: "\n")
    }
}
