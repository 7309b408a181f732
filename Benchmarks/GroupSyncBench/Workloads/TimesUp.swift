import Foundation

/// Workload 6: a spend on A that empties the balance, until B's notification server (a recording server on
/// B's own session bus) receives "time's up"; p50 and p99 over 100 rounds.
///
/// Balance and notifications are being built; until `groupsync balance` exists this slot records a skip,
/// decided at run time, so the same bench measures it once the feature lands (see Benchmarks/README.md for
/// the procedure it will follow).
enum TimesUp {
    static func run(_ bench: Bench) throws {
        let balance = try Subprocess.run(bench.binary, ["balance", "--help"])
        guard balance.status == 0 else {
            bench.results.skip("6. Time's up everywhere", "not available yet: `groupsync balance --help` exits \(balance.status) — the balance and notification features are not in this build")
            return
        }
        bench.results.skip("6. Time's up everywhere", "`groupsync balance` exists, but the recording notification server and the spend/notify steps are not wired into the bench yet (see Benchmarks/README.md, workload 6)")
    }
}
