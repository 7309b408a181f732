import Testing
@testable import GroupSyncCore

/// N replicas, random partitions, random spends, earnings, extensions, requests and agent passes over
/// several days. Each replica spends only its rights. Checked at every step on the union of all
/// writes: no device ever used more than it held (no overspend, no hidden debt); checked at the end,
/// after healing: every acknowledged spend is counted exactly once and all replicas agree.
@Suite struct BalanceRandomizedTests {
    @Test(arguments: 0..<30) func noOverspendAndNoLostSpendUnderPartitions(seed: Int) {
        var rng = SeededGenerator(seed: UInt64(seed) &* 7919 &+ 1)
        let count = UInt8(Int.random(in: 2...4, using: &rng))
        let devices = pairedDevices(count)
        devices[0].setPolicy(BalancePolicy.Key.dailyBase, .double(Double(Int.random(in: 0...90, using: &rng))), at: noon - day)
        devices[0].setPolicy(BalancePolicy.Key.maxExtensions, .int(Int64.random(in: 0...4, using: &rng)), at: noon - day)
        var now = noon - day / 2
        var acknowledgedSpent: Int64 = 0
        var acknowledgedEarned: Int64 = 0
        var partitions: [[BalanceDevice]] = [devices]
        let monitors = (0..<3).map { MonitorID(activity: "m\($0)", armedAt: noon - day / 2 + Int64($0) * 5 * 3_600_000) }

        for step in 0..<150 {
            now += Int64.random(in: 0...(3 * 3_600_000), using: &rng)
            if Int.random(in: 0..<10, using: &rng) == 0 {
                // Re-partition at random (sometimes everyone together).
                let shuffled = devices.shuffled(using: &rng)
                let cut = Int.random(in: 0...shuffled.count, using: &rng)
                partitions = [Array(shuffled[..<cut]), Array(shuffled[cut...])].filter { !$0.isEmpty }
            }
            let part = partitions.randomElement(using: &rng)!
            let device = part.randomElement(using: &rng)!
            let peers = Set(part.map(\.id)).subtracting([device.id])
            switch Int.random(in: 0..<11, using: &rng) {
            case 0..<4:
                let amount = Int64.random(in: 1...120, using: &rng) * 15_000
                acknowledgedSpent += device.act(at: now) { $0.spend(amount) }
            case 4:
                let amount = Int64.random(in: 1...40, using: &rng) * 15_000
                device.act(at: now) { $0.earn(amount, reason: "") }
                acknowledgedEarned += amount
            case 5: _ = device.act(at: now) { $0.extend() }
            case 6: device.act(at: now) { $0.request(holdMs: Int64.random(in: 0...200, using: &rng) * 15_000, slots: Int64.random(in: 0...1, using: &rng)) }
            case 7:
                // A usage threshold of one of a few monitors, sometimes early, sometimes in a burst.
                let monitor = monitors.randomElement(using: &rng)!
                let quarters = Int.random(in: 1...40, using: &rng)
                let firedAt = max(monitor.armedAt, now - Int64.random(in: 0...(2 * 3_600_000), using: &rng))
                let threshold = try! UsageThresholdName(parsing: "used-\(Double(quarters) / 4)")
                _ = device.act(at: now) { $0.recordUsage(monitor: monitor, threshold: threshold, at: firedAt) }
            default: device.act(at: now) { $0.rebalance(connected: peers) }
            }
            if Int.random(in: 0..<3, using: &rng) == 0 { syncAll(part, at: now) }
            if step % 10 == 9 { checkNoDeviceOverspent(devices, at: now, context: "seed \(seed) step \(step)") }
        }

        // Heal, let the agents settle, and check the books.
        settle(devices, at: now)
        let truth = union(devices)
        #expect(truth.days.values.reduce(0) { sum, byDay in sum + byDay.values.reduce(0) { $0 + $1.spentMs } } == acknowledgedSpent,
                "every acknowledged spend counted exactly once (seed \(seed))")
        for monitor in monitors {
            let paid = truth.charges.values.reduce(0) { $0 + ($1[monitor]?.ms ?? 0) }
            let usage = UsageVerdict(events: Array((truth.fired[monitor] ?? [:]).values), armedAt: monitor.armedAt).usedMs
            // Two devices pay a monitor's usage at most once; more may leave an excess (documented).
            if count == 2 { #expect(paid <= usage, "monitor \(monitor) paid \(paid) for \(usage) (seed \(seed))") }
        }
        #expect(truth.earned.values.reduce(0) { $0 + $1.ms } == acknowledgedEarned)
        let summaries = devices.map { $0.summary(at: now) }
        for s in summaries {
            #expect(s.remainingMs == summaries[0].remainingMs, "replicas agree (seed \(seed))")
            #expect(s.remainingMs >= 0)
            #expect(s.allowanceMs + s.extensionMs + s.earnedMs - s.spentTodayMs == s.remainingMs, "seed \(seed)")
        }
        checkNoDeviceOverspent(devices, at: now, context: "seed \(seed) healed")
    }

    /// On the union of every replica's writes, no device's spending ever exceeded its rights.
    func checkNoDeviceOverspent(_ devices: [BalanceDevice], at now: Int64, context: String) {
        let truth = union(devices)
        let today = LocalCalendar.utc.day(atUTCMillis: now)
        for d in truth.accounts {
            #expect(truth.earnedHeldMs(of: d, today: today) >= 0, "device \(d.short) overspent: \(context)")
            let dayHeld = truth.dayRightsMs(of: d, on: today, today: today) - truth.spentMs(of: d, on: today)
            #expect(dayHeld + max(0, truth.earnedHeldMs(of: d, today: today, excludingDay: today)) >= 0, "\(context)")
            #expect(truth.freeSlots(of: d, today: today) >= 0)
            // The one-pass reading of every day's spending (`overflowByDay`) agrees with asking day by day.
            var spendDays = Set((truth.days[d] ?? [:]).filter { $0.value.spentMs > 0 }.keys)
            for charge in (truth.charges[d] ?? [:]).values { spendDays.formUnion(charge.days) }
            let dayByDay = Dictionary(uniqueKeysWithValues: spendDays.map { ($0, truth.overflowMs(of: d, on: $0, today: today)) })
            #expect(truth.overflowByDay(of: d, today: today) == dayByDay, "\(context)")
        }
        let extensions = truth.days.values.reduce(0) { $0 + ($1[today]?.extensions ?? 0) }
        #expect(extensions <= truth.policy.maxExtensions, "extension cap held: \(context)")
    }

    /// The ledger every write so far would make, as if all replicas had met.
    func union(_ devices: [BalanceDevice]) -> BalanceLedger {
        let merged = MemoryReplicaStore(device: devices[0].id, storeID: "union")
        for d in devices { _ = merged.apply(d.store.changes(after: 0, limit: .max).map(\.entry), physicalMillis: .max / 2) }
        return BalanceLedger(entries: merged.entries)
    }
}
