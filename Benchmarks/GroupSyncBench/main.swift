import Foundation

// groupsync-bench: see Options.usage and Benchmarks/README.md.

setvbuf(stdout, nil, _IOLBF, 0)
let options: Options
do { options = try Options.parse(Array(CommandLine.arguments.dropFirst())) } catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(2)
}

let bench: Bench
do { bench = try Bench(options: options) } catch {
    FileHandle.standardError.write(Data("groupsync-bench: \(error)\n".utf8))
    exit(3)
}
bench.results.environment = Environment.describe(bench)

// Ctrl-C or SIGTERM: end the daemons and servers started so far and remove the scratch folder.
signal(SIGINT, SIG_IGN)
signal(SIGTERM, SIG_IGN)
let stopSources = [SIGINT, SIGTERM].map { number -> DispatchSourceSignal in
    let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
    source.setEventHandler {
        FileHandle.standardError.write(Data("groupsync-bench: interrupted; stopping its processes\n".utf8))
        Subprocess.endAll()
        bench.finish()
        exit(130)
    }
    source.resume()
    return source
}
Progress.say("scratch folder \(bench.folder.path); binary \(bench.binary); mode \(options.quick ? "quick" : "full"), N = \(options.n)")

let workloads: [(Int, String, (Bench) throws -> Void)] = [
    (1, "propagation latency", Propagation.run),
    (2, "bulk catch-up", BulkCatchUp.run),
    (3, "delta catch-up", DeltaCatchUp.run),
    (4, "local writes", LocalWrites.run),
    (5, "footprint", Footprint.run),
    (6, "time's up", TimesUp.run),
]
let started = Clock.nanos()
for (number, name, run) in workloads where options.wants(number) {
    Progress.say("workload \(number): \(name)")
    let start = Clock.nanos()
    do { try run(bench) } catch {
        bench.results.skip("workload \(number) (\(name))", "failed: \(error)")
    }
    Progress.say("workload \(number) took \(Format.number(Clock.millis(since: start) / 1000, digits: 1)) s")
}
bench.results.environment["loadEnd"] = Environment.loadAverage()
bench.results.environment["wallSeconds"] = Clock.millis(since: started) / 1000

do {
    try Output.write(bench)
} catch {
    FileHandle.standardError.write(Data("groupsync-bench: cannot write results: \(error)\n".utf8))
    exit(3)
}
print(bench.results.table)
bench.finish()
