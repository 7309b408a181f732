import Testing
@testable import GroupSyncCore

/// The deterministic simulator over many seeds: 3–7 replicas of the real session state machines and stores,
/// partitions, lost (connection-resetting), duplicated, reordered and delayed frames, crashes that restart
/// from durable state (some between two transactions of one event), skewed and jumping clocks. Each seed
/// must converge and keep every promise (see `Simulator`). A failure names its seed and the command that
/// replays it exactly; `make soak` runs thousands of seeds of the longer default run.
@Suite struct SimulationTests {
    /// Shorter than the CLI's default run (50 operations over 6 simulated minutes instead of 120 over 15,
    /// with partitions, crashes and clock jumps a little more frequent) so 500 seeds stay within CI's budget
    /// (about 100 ms per seed in a debug build, 2 at a time); `make soak` runs thousands of seeds of the default run.
    static var ci: SimulationOptions {
        var options = SimulationOptions()
        options.operations = 50
        options.faultMillis = 6 * 60_000
        options.partitionRate = 0.4
        options.crashRate = 0.3
        options.jumpRate = 0.15
        return options
    }

    static let replay = "groupsync simulate --operations 50 --minutes 6 --partition-rate 0.4 --crash-rate 0.3 --jump-rate 0.15 --trace --seed"

    @Test(arguments: 0..<500 as Range<UInt64>) func seedConvergesAndKeepsEveryPromise(seed: UInt64) {
        let result = Simulator.run(seed: seed, options: Self.ci)
        #expect(result.passed, "seed \(seed) (\(result.replicas) replicas) failed; replay with '\(Self.replay) \(seed)':\n\(result.failures.prefix(5).joined(separator: "\n"))")
    }

    @Test func balanceOperationsAreInEveryRun() {
        let result = Simulator.run(seed: 7, options: Self.ci)
        #expect(result.failures.isEmpty)
        var options = Self.ci
        options.trace = true
        #expect(Simulator.run(seed: 7, options: options).trace.contains { $0.contains("balance spend") })
    }

    /// Extensions and usage thresholds, genuine and phantom, happen in the runs: granted, refused at the cap,
    /// and each kind of usage recorded, some of it by more than one device.
    @Test func extensionsAndUsageAreInTheRuns() {
        var options = Self.ci
        options.trace = true
        let trace = (0..<20 as Range<UInt64>).flatMap { Simulator.run(seed: $0, options: options).trace }
        for expected in ["balance policy", "extend: granted", "extend: capReached", "extend: noSlotHere", "genuine monitor", "phantom monitor",
                         "too-early", "phantom-burst", "genuine charged"] {
            #expect(trace.contains { $0.contains(expected) }, "no '\(expected)' in 20 seeds")
        }
    }

    /// Found by the balance workload: a device whose store was moved aside wrote its earned total afresh from
    /// zero, and that newer, smaller total replaced the one its peers held. Seed 743 of the default run showed
    /// it first, 33 and 47 after the sessions began skipping echoes unread (which moved every run's timing);
    /// balance records are now keyed by store epoch as well as device, and the exact totals hold. Stores are
    /// moved aside ten times as often as by default, so every seed here exercises it whatever the timing
    /// (seed 47 stopped moving any when a resume point of 0 stopped counting as void; 44 took its place).
    @Test(arguments: [33, 44, 743] as [UInt64]) func balanceTotalsSurviveAStoreMovedAside(seed: UInt64) {
        var options = SimulationOptions()
        options.storeResetRate = 0.5
        let result = Simulator(seed: seed, options: options, workloads: [KeyValueWorkload(), BalanceWorkload()]).run()
        #expect(result.stats.storeResets > 0, "the seed no longer moves a store aside; pick another")
        #expect(result.failures.isEmpty, "\(result.failures.prefix(2))")
    }

    /// Found by the extension cap in seed 48 of the default run: a store moved aside counted as synced once a
    /// first batch from each peer was in, founded the balance again before its old founder record arrived, and
    /// granted an extension the day had already used. Founding now waits until it has caught up with each peer.
    @Test func aStoreMovedAsideFoundsNoSecondBalanceBeforeItCaughtUp() {
        let result = Simulator.run(seed: 48)
        #expect(result.stats.storeResets > 0, "the seed no longer moves a store aside; pick another")
        #expect(result.passed, "\(result.failures.prefix(2))")
    }

    @Test func aSeedReplaysExactly() {
        var options = Self.ci
        options.trace = true
        let first = Simulator.run(seed: 42, options: options), second = Simulator.run(seed: 42, options: options)
        #expect(first.trace.count > 100)
        #expect(first.trace == second.trace)
        #expect(first.stats == second.stats)
        #expect(Simulator.run(seed: 43, options: options).trace != first.trace)
    }

    @Test func everyFaultKindHappens() {
        var totals = SimulationStats()
        for seed in 0..<20 as Range<UInt64> { totals.add(Simulator.run(seed: seed, options: Self.ci).stats) }
        #expect(totals.partitions > 0 && totals.drops > 0 && totals.duplicates > 0 && totals.reorders > 0 && totals.delays > 0)
        #expect(totals.crashes > 0 && totals.midEventCrashes > 0 && totals.clockJumps > 0 && totals.clockSteps > 0 && totals.refusals > 0)
        #expect(totals.storeResets > 0 && totals.visibleWriteLosses > 0)
        #expect(totals.closes["peer-silent", default: 0] > 0 && totals.closes["clock-skew", default: 0] > 0)
    }

    /// The checker has teeth: a store that loses acknowledged transactions in a crash is caught.
    @Test func aStoreThatAcknowledgesBeforeItIsDurableIsCaught() {
        var options = Self.ci
        options.loseAcknowledgedWritesOnCrash = true
        options.crashRate = 2
        let failures = (0..<10 as Range<UInt64>).flatMap { Simulator.run(seed: $0, options: options).failures }
        print("the checker on a store that loses acknowledged writes: \(failures.count) failures, e.g. \(failures.first ?? "none")")
        #expect(failures.contains { $0.contains("no longer holds what it acknowledged") }, "a lost acknowledged batch is caught: \(failures.prefix(3))")
        #expect(failures.contains { $0.contains("is gone") }, "a lost local write is caught: \(failures.prefix(3))")
    }

    /// A local write, or a peer's batch, is visible, and forwarded, before its fsync ends (`Store.write`,
    /// `Store.apply`). A power cut in that window takes it from its device, with the send horizons raised
    /// to forward it; peers that read it keep it and send it back (PROTOCOL.md §6.6), and the device's
    /// reused positions are resent to them because its horizons went back too (§6.3). Cut often here, so
    /// some lost local writes do survive.
    @Test func aWriteLostAfterItWasForwardedWinsEverywhereOrNowhere() {
        var options = Self.ci
        options.visibleWriteLossRate = 0.3
        var losses = 0, survived = 0
        for seed in 0..<20 as Range<UInt64> {
            let keyValues = KeyValueWorkload()
            let result = Simulator(seed: seed, options: options, workloads: [keyValues, BalanceWorkload()]).run()
            #expect(result.passed, "seed \(seed): \(result.failures.prefix(3))")
            losses += result.stats.visibleWriteLosses
            survived += keyValues.lostWritesThatSurvived
        }
        print("writes and batches lost to a power cut after they were visible: \(losses); lost local writes a peer kept: \(survived)")
        #expect(losses > 0 && survived > 0, "\(losses) lost, \(survived) local writes kept by a peer")
    }

    /// The checker has teeth here too: horizons that outlive the write they were raised for let a device
    /// reuse positions its peers already read, and they never learn what it wrote there.
    @Test func aSendHorizonThatOutlivesAPowerCutIsCaught() {
        var options = Self.ci
        options.visibleWriteLossRate = 0.3
        options.keepSendHorizonsOnVisibleWriteLoss = true
        let failures = (0..<20 as Range<UInt64>).flatMap { Simulator.run(seed: $0, options: options).failures }
        print("the checker on horizons that outlive a power cut: \(failures.count) failures, e.g. \(failures.first ?? "none")")
        #expect(!failures.isEmpty, "a device that trusts a horizon it lost the history for is caught")
    }

    @Test func withoutFaultsEverySessionStaysUp() {
        let result = Simulator.run(seed: 1, options: .noFaults)
        #expect(result.passed, "\(result.failures)")
        #expect(result.stats.closes.isEmpty, "\(result.stats.closes)")
        #expect(result.stats.connections == result.replicas * (result.replicas - 1) / 2)
        #expect(result.stats.convergeMillis! < 1_000)
    }
}
