import Testing
@testable import GroupSyncCore

/// Many rapid earn-then-spend rounds between two connected devices, as the time's-up benchmark does: while
/// connected, a device must be able to spend the whole balance, whatever the agents did in between.
@Suite struct BalanceRapidRoundsTests {
    @Test func aConnectedDeviceCanAlwaysSpendTheWholeBalance() {
        let devices = pairedDevices(2)
        let (a, b) = (devices[0], devices[1])
        var now = noon
        settle(devices, at: now)
        for round in 0..<60 {
            now += 200
            a.act(at: now) { $0.earn(minute, reason: "") }
            // The daemons react to the earn: each agent pass, then replication.
            for d in devices { d.act(at: now) { $0.rebalance(connected: Set(devices.map(\.id)).subtracting([d.id])) } }
            syncAll(devices, at: now)
            // The CLI: ask when holding too little, let the peer's agent answer, then spend.
            if a.book(at: now).ledger.heldMs(of: a.account, today: a.book(at: now).today) < minute {
                a.act(at: now) { $0.request(holdMs: minute) }
                syncAll(devices, at: now)
                b.act(at: now) { $0.rebalance(connected: [a.id]) }
                syncAll(devices, at: now)
            }
            let spent = a.act(at: now) { $0.spend(minute) }
            #expect(spent == minute, "round \(round): spent \(spent) of \(minute); b holds \(b.book(at: now).ledger.heldMs(of: b.account, today: b.book(at: now).today))")
            if spent != minute { return }
            syncAll(devices, at: now)
        }
    }
}

extension BalanceRapidRoundsTests {
    /// The same with the daemons' passes and replication in random order, one direction at a time.
    @Test(arguments: 0..<40) func aRequestIsAnsweredWhateverTheInterleaving(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        let devices = pairedDevices(2)
        let (a, b) = (devices[0], devices[1])
        var now = noon
        settle(devices, at: now)
        func randomSteps(_ count: Int) {
            for _ in 0..<count {
                now += Int64.random(in: 0...50, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: a.act(at: now) { $0.rebalance(connected: [b.id]) }
                case 1: b.act(at: now) { $0.rebalance(connected: [a.id]) }
                case 2: sync(a, b, at: now)
                default: sync(b, a, at: now)
                }
            }
        }
        for round in 0..<40 {
            a.act(at: now) { $0.earn(minute, reason: "") }
            randomSteps(Int.random(in: 0...6, using: &rng))
            if a.book(at: now).ledger.heldMs(of: a.account, today: a.book(at: now).today) < minute {
                a.act(at: now) { $0.request(holdMs: minute) }
                randomSteps(Int.random(in: 0...6, using: &rng))
                // However the interleaving went, a few full rounds of replication and agent passes must satisfy it.
                for _ in 0..<4 {
                    syncAll(devices, at: now)
                    b.act(at: now) { $0.rebalance(connected: [a.id]) }
                    a.act(at: now) { $0.rebalance(connected: [b.id]) }
                }
                syncAll(devices, at: now)
            }
            let held = a.book(at: now).ledger.heldMs(of: a.account, today: a.book(at: now).today)
            let spent = a.act(at: now) { $0.spend(minute) }
            #expect(spent == minute, "seed \(seed) round \(round): a held \(held), spent \(spent); b holds \(b.book(at: now).ledger.heldMs(of: b.account, today: b.book(at: now).today)); request active: \(b.book(at: now).ledger.hasActiveRequest(a.account, today: b.book(at: now).today))")
            if spent != minute { return }
            randomSteps(Int.random(in: 0...6, using: &rng))
        }
    }
}
