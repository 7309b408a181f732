import Foundation

/// `--perf DIR`: records `perf record -g` of the daemons under test while a GroupSync figure is measured,
/// one file per figure (e.g. bulk-100000.data). System-wide (`-a`), because `perf record -p` misses the
/// threads a daemon starts after it attached, which is where sessions run; the daemons' PIDs are written
/// beside it (bulk-100000.pids) for `perf report -i bulk-100000.data --pid $(cat bulk-100000.pids)`, which
/// keeps other programs on a shared machine out of the report. Profiling slows what it watches: figures of
/// such a run are not for the results table.
final class Profiler {
    private let process: Subprocess

    private init(process: Subprocess) { self.process = process }

    static func start(_ bench: Bench, name: String, pids: [Int32]) -> Profiler? {
        guard let folder = bench.options.perfFolder, !pids.isEmpty else { return nil }
        guard let perf = Subprocess.which("perf") else {
            Progress.say("  --perf: perf is not installed (apt-get install linux-perf)")
            return nil
        }
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let output = folder + "/" + name + ".data"
        try? pids.map(String.init).joined(separator: ",").write(toFile: folder + "/" + name + ".pids", atomically: true, encoding: .utf8)
        guard let process = try? Subprocess(perf, ["record", "-F", "1999", "-g", "-a", "-o", output],
                                            stderr: .file(folder + "/perf.log")) else { return nil }
        usleep(200_000)  // perf is recording before the measured work starts
        Progress.say("  --perf: recording \(output)")
        return Profiler(process: process)
    }

    func stop() { process.stop(signal: SIGINT, seconds: 30) }
}
