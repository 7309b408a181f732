import Dispatch
import Glibc
import GroupSyncCore
import Synchronization

/// `groupsync simulate`: the deterministic simulator as a tool. App makers try their own offline-first
/// scenarios (more replicas, harsher networks, worse clocks) and get a convergence report; a failing seed
/// is printed and replays exactly.
enum SimulateCommand: Command {
    static let name = "simulate"
    static let summary = "simulate replicas under faults from seeds and report convergence"
    static let help = """
        usage: groupsync simulate [--replicas N|A-B] [--seeds S] [--first-seed N | --seed N] [FAULT OPTIONS]

        Runs the real replication state machines and in-memory stores of N devices over a simulated network
        and clock, once per seed. During a fault phase apps write and delete on random devices, and use the
        balance (policy, earn, spend, extend, usage thresholds genuine and phantom), while the network
        partitions, loses, duplicates, reorders and delays frames, devices crash and restart from what was
        on disk (some losing a write or batch already visible and forwarded, not yet synced), stores are
        moved aside and refilled, and clocks are skewed and jump by minutes. Then everything heals, and
        each seed must converge: every device holds the same store, every key holds its last write by
        (hlc, origin), no deleted key comes back, nothing acknowledged is lost, and the balance counts every
        earning, spend, extension and usage once, within its caps. A seed replays exactly:
        rerun a failure with --seed N (add --trace to see every event). Nothing touches this device's home
        or the network.

          --replicas N|A-B    devices per seed, or a range drawn per seed (default 3-7; 2 to 16)
          --seeds S           how many seeds (default 100)
          --first-seed N      the first seed (default 0); seeds are N, N+1, …
          --seed N            run only seed N (same as --first-seed N --seeds 1)
          --operations N      writes and deletes per seed (default 120)
          --minutes M         simulated minutes of faults per seed (default 15)
          --partition-rate R  partitions per simulated minute (default 0.3)
          --drop-rate P       probability a frame is lost, resetting its connection (default 0.004)
          --dup-rate P        probability a frame is delivered twice (default 0.001)
          --reorder-rate P    probability a frame overtakes the previous one (default 0.001)
          --delay-rate P      probability a frame is held up, up to --max-delay (default 0.01)
          --max-delay SECONDS longest hold-up of a frame (default 120)
          --crash-rate R      device or daemon crashes per simulated minute (default 0.2)
          --reset-rate R      stores moved aside (new store ID, refilled by peers) per simulated minute (default 0.05)
          --visible-loss-rate P  probability a write, or a received batch, is lost to a power cut after it
                              was visible and forwarded, before its fsync ended (default 0.03)
          --skew SECONDS      each device's clock is off by up to this much either way (default 120)
          --jump-rate R       clock jumps of 6-10 minutes per simulated minute (default 0.1)
          --no-faults         all rates and the skew 0, except those given explicitly
          --trace             print every event of each failing seed (of every seed with --seed)
          --jobs N            seeds run in parallel (default: the number of processors)

        Exit codes: 0 every seed converged, 4 some seed failed (the report names it), 2 bad usage.
        Clocks more than 5 minutes apart (--skew above 150) never sync: that is the drift bound at work,
        and the report says so.
        """
    static let flags = FlagSpec.with(
        valued: Set(["--seeds", "--first-seed", "--seed", "--jobs"] + scenarioFlags),
        switches: ["--no-faults", "--trace"])

    /// The options that shape each seed's scenario (not which seeds run, or how): a replay repeats them.
    private static let scenarioFlags = ["--replicas", "--operations", "--minutes", "--partition-rate", "--drop-rate", "--dup-rate",
                                        "--reorder-rate", "--delay-rate", "--max-delay", "--crash-rate", "--reset-rate",
                                        "--visible-loss-rate", "--skew", "--jump-rate"]

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        _ = try arguments.positionals()
        var options = arguments.has("--no-faults") ? SimulationOptions.noFaults : SimulationOptions()
        if let text = arguments.value("--replicas") { options.replicas = try replicaRange(text) }
        if arguments.value("--seed") != nil && (arguments.value("--seeds") != nil || arguments.value("--first-seed") != nil) {
            throw .usage("--seed runs one seed; it cannot be combined with --seeds or --first-seed")
        }
        var first: UInt64 = 0, count: UInt64 = 100
        if let text = arguments.value("--seed") {
            first = try integer(text, "--seed", 0...UInt64(Int64.max))
            count = 1
        }
        if let text = arguments.value("--first-seed") { first = try integer(text, "--first-seed", 0...UInt64(Int64.max)) }
        if let text = arguments.value("--seeds") { count = try integer(text, "--seeds", 1...10_000_000) }
        if let text = arguments.value("--operations") { options.operations = Int(try integer(text, "--operations", 0...1_000_000)) }
        if let text = arguments.value("--minutes") { options.faultMillis = Int64(try integer(text, "--minutes", 0...10_000)) * 60_000 }
        if let text = arguments.value("--partition-rate") { options.partitionRate = try rate(text, "--partition-rate", max: 60) }
        if let text = arguments.value("--drop-rate") { options.dropRate = try rate(text, "--drop-rate", max: 1) }
        if let text = arguments.value("--dup-rate") { options.duplicateRate = try rate(text, "--dup-rate", max: 1) }
        if let text = arguments.value("--reorder-rate") { options.reorderRate = try rate(text, "--reorder-rate", max: 1) }
        if let text = arguments.value("--delay-rate") { options.delayRate = try rate(text, "--delay-rate", max: 1) }
        if let text = arguments.value("--max-delay") { options.maxDelayMillis = Int64(try integer(text, "--max-delay", 1...86_400)) * 1000 }
        if let text = arguments.value("--crash-rate") { options.crashRate = try rate(text, "--crash-rate", max: 60) }
        if let text = arguments.value("--reset-rate") { options.storeResetRate = try rate(text, "--reset-rate", max: 60) }
        if let text = arguments.value("--visible-loss-rate") { options.visibleWriteLossRate = try rate(text, "--visible-loss-rate", max: 1) }
        if let text = arguments.value("--skew") { options.maxSkewMillis = Int64(try integer(text, "--skew", 0...86_400)) * 1000 }
        if let text = arguments.value("--jump-rate") { options.jumpRate = try rate(text, "--jump-rate", max: 60) }
        let single = count == 1
        options.trace = arguments.has("--trace") && single
        var jobs = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        if let text = arguments.value("--jobs") { jobs = Int(try integer(text, "--jobs", 1...256)) }

        let replayOptions = (arguments.has("--no-faults") ? " --no-faults" : "")
            + scenarioFlags.compactMap { flag in arguments.value(flag).map { " \(flag) \($0)" } }.joined()
        var report = SimulationReport(options: options, replayOptions: replayOptions)
        report.results = runSeeds(first: first, count: Int(count), options: options, jobs: jobs)
        if arguments.has("--trace") && !single {
            // Replay the failures with tracing: a seed replays exactly, so the trace shows what went wrong.
            var traced = options
            traced.trace = true
            report.results = report.results.map { $0.passed ? $0 : Simulator.run(seed: $0.seed, options: traced) }
        }
        for result in report.results where !result.trace.isEmpty {
            Console.out("--- trace of seed \(result.seed) ---")
            for line in result.trace { Console.out(line) }
            Console.out("--- end of trace ---")
        }
        Console.out(report.text)
        if !report.failed.isEmpty {
            let seeds = report.failed.prefix(5).map { "\($0.seed)" }.joined(separator: ", ")
            throw .verificationFailed("\(report.failed.count) of \(report.results.count) seeds did not converge or broke a promise (first: \(seeds)); replay one with --seed N\(replayOptions) --trace")
        }
    }

    private static func runSeeds(first: UInt64, count: Int, options: SimulationOptions, jobs: Int) -> [SimulationResult] {
        let results = Mutex<[SimulationResult?]>(Array(repeating: nil, count: count))
        let next = Atomic<Int>(0)
        let workers = min(jobs, count)
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while true {
                let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard index < count else { return }
                let result = Simulator.run(seed: first &+ UInt64(index), options: options)
                results.withLock { $0[index] = result }
            }
        }
        return results.withLock { $0.compactMap { $0 } }
    }

    private static func replicaRange(_ text: String) throws(CLIError) -> ClosedRange<Int> {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        let bounds = parts.compactMap { Int($0) }
        guard (parts.count == 1 || parts.count == 2), bounds.count == parts.count, let low = bounds.first, let high = bounds.last,
              low >= 2, high <= 16, low <= high else {
            throw .badInput("--replicas expects N or A-B with 2 ≤ A ≤ B ≤ 16, got '\(text)'")
        }
        return low...high
    }

    private static func integer(_ text: String, _ flag: String, _ range: ClosedRange<UInt64>) throws(CLIError) -> UInt64 {
        guard let value = UInt64(text), range.contains(value) else {
            throw .badInput("\(flag) expects a whole number from \(range.lowerBound) to \(range.upperBound), got '\(text)'")
        }
        return value
    }

    private static func rate(_ text: String, _ flag: String, max: Double) throws(CLIError) -> Double {
        guard let value = DecimalNumber.parse(text), value >= 0, value <= max else {
            throw .badInput("\(flag) expects a number from 0 to \(max), got '\(text)'")
        }
        return value
    }
}
