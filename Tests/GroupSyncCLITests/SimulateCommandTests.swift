import Testing

/// `groupsync simulate` as a user runs it: a report, exit 0 when every seed converges, exit 4 and the
/// failing seed when one does not, exit 2 for bad usage.
@Suite struct SimulateCommandTests {
    let cli = GroupSyncBinary(home: "/nonexistent/groupsync-simulate-needs-no-home")

    @Test func seedsThatConvergeExitZeroWithAReport() throws {
        let result = try cli.run("simulate", "--replicas", "3-4", "--seeds", "4", "--operations", "30", "--minutes", "3")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("converged: 4 of 4"), "\(result.stdout)")
        #expect(result.stdout.contains("faults:"))
        #expect(result.stdout.contains("time to converge"))
    }

    @Test func aFailingSeedIsNamedAndExitsFour() throws {
        // Clocks up to 15 minutes apart: beyond the 5-minute drift bound, some devices can never sync.
        let result = try cli.run("simulate", "--no-faults", "--skew", "900", "--replicas", "3", "--seed", "1", "--operations", "10")
        #expect(result.status == 4, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("seed 1 FAILED"))
        #expect(result.stdout.contains("--seed 1"))
        #expect(result.stdout.contains("clock skew"))
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    /// The replay a failure prints carries the scenario's options, so that it fails the same way (found by
    /// review: it printed `--seed N` alone, which ran the default scenario and passed).
    @Test func thePrintedReplayOfAFailingSeedFailsAlike() throws {
        let result = try cli.run("simulate", "--no-faults", "--skew", "900", "--replicas", "3", "--seeds", "2", "--operations", "10", "--jobs", "1")
        #expect(result.status == 4, "\(result.stdout)\(result.stderr)")
        guard let line = result.stdout.split(separator: "\n").first(where: { $0.contains("FAILED") && $0.contains("replay with ") }),
              let seed = line.split(separator: " ").dropFirst().first else { Issue.record("no replay line in \(result.stdout)"); return }
        let replay = String(line[line.range(of: "replay with ")!.upperBound...])
        #expect(replay == "--seed \(seed) --no-faults --replicas 3 --operations 10 --skew 900")
        #expect(result.stderr.contains("--seed N --no-faults --replicas 3 --operations 10 --skew 900 --trace"), "\(result.stderr)")
        let again = try cli.run(["simulate"] + replay.split(separator: " ").map(String.init))
        #expect(again.status == 4 && again.stdout.contains("seed \(seed) FAILED"), "\(again.stdout)")
    }

    @Test func oneSeedWithTraceShowsEveryEvent() throws {
        let result = try cli.run("simulate", "--seed", "5", "--replicas", "3", "--operations", "10", "--minutes", "2", "--trace")
        #expect(result.status == 0)
        #expect(result.stdout.contains("--- trace of seed 5 ---"))
        #expect(result.stdout.contains("event=established"))
        let again = try cli.run("simulate", "--seed", "5", "--replicas", "3", "--operations", "10", "--minutes", "2", "--trace")
        #expect(again.stdout == result.stdout, "a seed replays exactly")
    }

    @Test func badUsageExitsTwo() throws {
        for arguments in [["--replicas", "1"], ["--replicas", "3-2"], ["--seeds", "0"], ["--drop-rate", "2"], ["--seed", "1", "--seeds", "2"],
                          ["--skew", "-1"], ["extra"], ["--frobnicate"]] {
            let result = try cli.run(["simulate"] + arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments)")
        }
    }
}
