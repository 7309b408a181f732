import Foundation

/// The machine and the versions a run measured, recorded with its results.
enum Environment {
    static func describe(_ bench: Bench) -> [String: Any] {
        var env: [String: Any] = [
            "date": ISO8601DateFormatter().string(from: Date()),
            "mode": bench.options.quick ? "quick" : "full",
            "n": bench.options.n,
            "runs": bench.options.runs,
            "cores": ProcessInfo.processInfo.activeProcessorCount,
            "memoryGB": Double(ProcessInfo.processInfo.physicalMemory) / 1e9,
            "cpu": cpuModel(),
            "kernel": (try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?",
            "loadStart": loadAverage(),
            "sqlite": SQLiteFloor.version,
            "redis": RedisServer.version ?? NSNull(),
            "pycrdt": bench.yjs?.version ?? NSNull(),
            "commit": gitCommit(root: bench.options.root),
        ]
        if let load = Double(loadAverage().split(separator: " ").first ?? ""), load > 0.5 {
            env["sharedMachineNote"] = "The machine was not idle when this run started (1-minute load \(load) on \(ProcessInfo.processInfo.activeProcessorCount) cores): other jobs shared it, so absolute figures are noisy; compare the ratios, which come from the same run."
        }
        return env
    }

    static func loadAverage() -> String {
        ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?").split(separator: " ").prefix(3).joined(separator: " ")
    }

    static func cpuModel() -> String {
        let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        for line in info.split(separator: "\n") where line.hasPrefix("model name") {
            return line.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "?"
        }
        return "?"
    }

    static func gitCommit(root: String) -> String {
        guard let git = Subprocess.which("git"),
              let result = try? Subprocess.run(git, ["-C", root, "rev-parse", "--short", "HEAD"]), result.status == 0 else { return "?" }
        // The results and their analysis are written after the code they measure; they do not make it "changed".
        let dirty = (try? Subprocess.run(git, ["-C", root, "status", "--porcelain", "--untracked-files=no", "--", ".",
                                               ":!Benchmarks/results", ":!Benchmarks/analysis.md"]))?.stdout.isEmpty == false
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) + (dirty ? "+changes" : "")
    }
}
