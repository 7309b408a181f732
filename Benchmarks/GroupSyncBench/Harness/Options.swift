import Foundation

/// Sizes and switches. `--quick` shrinks every workload so the whole run takes about a minute; the full run
/// uses the sizes of issue #7.
struct Options {
    var quick = false
    var n = 100_000
    var runs = 3
    var propagationWrites = 1000
    var bulkSizes = [10_000, 100_000, 1_000_000]
    var deltaSizes = [10_000, 100_000, 1_000_000]
    var deltaKs = [1, 100, 1000]
    var headlineK = 100
    var writeSeconds = 5.0
    var idleSeconds = 60.0
    var idleRuns = 3
    var handshakes = 50
    var only: Set<Int>? = nil
    var root = FileManager.default.currentDirectoryPath
    var out: String? = nil
    var binary: String? = nil
    var keep = false
    var perfFolder: String? = nil

    static let usage = """
        usage: groupsync-bench [--quick] [--only 1,2,…] [--n N] [--runs R] [--out DIR] [--root DIR] [--binary PATH] [--keep]

        Runs the workloads of issue #7 against real `groupsync` daemons over loopback TLS and, in the same run,
        against Redis (primary + replica), Yjs (pycrdt) and raw SQLite; prints one table and writes
        results.json, results.md and catchup.png to --out (default: ROOT/Benchmarks/results for a full run
        with the issue's sizes; ROOT/Benchmarks/results/quick with --quick; ROOT/Benchmarks/results/partial for
        any run with --only, --n, --runs or --perf, so that it never replaces the committed full run).

          --quick        small sizes (N = 2,000), two runs, short idle window: about a minute
          --only LIST    only these workloads (1 propagation, 2 bulk catch-up, 3 delta catch-up, 4 local writes,
                         5 footprint, 6 time's up)
          --n N          the store size of the headline figures (default 100000)
          --runs R       runs per figure (default 3)
          --root DIR     the package root (default: the current folder)
          --binary PATH  the groupsync binary (default: next to this program)
          --keep         keep the temporary homes and logs
          --perf DIR     record `perf record -g` of the daemons during the GroupSync figures of workloads 1–3
                         into DIR (slows them: for finding where time goes, not for the table)
        """

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var rest = arguments[...]
        func value(_ flag: String) throws -> String {
            guard let next = rest.popFirst() else { throw BenchError("\(flag) needs a value") }
            return next
        }
        var explicitN: Int?
        var explicitRuns: Int?
        while let argument = rest.popFirst() {
            switch argument {
            case "--quick": options.quick = true
            case "--only":
                let list = try value(argument)
                let workloads = list.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
                guard !workloads.isEmpty, workloads.allSatisfy({ $0.map { (1...6).contains($0) } ?? false }) else {
                    throw BenchError("--only expects workload numbers from 1 to 6, separated by commas, not '\(list)'")
                }
                options.only = Set(workloads.compactMap { $0 })
            case "--n": explicitN = try count(argument, value(argument))
            case "--runs": explicitRuns = try count(argument, value(argument))
            case "--root": options.root = try value(argument)
            case "--out": options.out = try value(argument)
            case "--binary": options.binary = try value(argument)
            case "--keep": options.keep = true
            case "--perf": options.perfFolder = try value(argument)
            case "-h", "--help": print(usage); exit(0)
            default: throw BenchError("unknown argument '\(argument)'\n\(usage)")
            }
        }
        if options.quick {
            options.n = 2000
            options.runs = 2
            options.propagationWrites = 200
            options.bulkSizes = [1000, 2000]
            options.deltaSizes = [1000, 2000, 10_000]
            options.deltaKs = [1, 100]
            options.writeSeconds = 1.5
            options.idleSeconds = 5
            options.idleRuns = 1
            options.handshakes = 10
        }
        if let explicitN {
            options.n = explicitN
            if !options.bulkSizes.contains(explicitN) { options.bulkSizes.append(explicitN); options.bulkSizes.sort() }
            if !options.deltaSizes.contains(explicitN) { options.deltaSizes.append(explicitN); options.deltaSizes.sort() }
        }
        if let explicitRuns { options.runs = explicitRuns }
        options.isPartial = options.only != nil || explicitN != nil || explicitRuns != nil || options.perfFolder != nil
        return options
    }

    /// A whole number of at least 1, or an error naming the flag: a typo must not run the defaults.
    private static func count(_ flag: String, _ text: String) throws -> Int {
        guard let number = Int(text), number >= 1 else { throw BenchError("\(flag) expects a whole number of at least 1, not '\(text)'") }
        return number
    }

    /// Not the full run of the sizes: written apart from the committed results (`outputFolder`).
    var isPartial = false

    func wants(_ workload: Int) -> Bool { only?.contains(workload) ?? true }

    var outputFolder: String { out ?? (root + "/Benchmarks/results" + (quick ? "/quick" : isPartial ? "/partial" : "")) }
}
