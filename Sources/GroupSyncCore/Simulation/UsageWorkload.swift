/// Usage thresholds in the simulator: monitors armed on the devices deliver `used-N` events, which the devices
/// record through the real `BalanceBook.recordUsage` (paying for the usage from their rights), while the
/// simulator partitions, crashes and skews clocks around them. The same event is often recorded by several
/// devices, on both sides of a partition.
///
/// A monitor is genuine or a phantom, decided when it is armed. A genuine one's thresholds fire when their
/// usage could have run (`used-N` at least N after the arming); a phantom's fire as iOS's phantoms do: too
/// early for the clock (guard 1), or as a burst of thresholds a minute or more apart in one instant (guard
/// 2), which a device records all at once, as its extension delivers them.
///
/// Promises checked once converged: each monitor's usage is its highest genuine threshold, and nothing for a
/// phantom; and once every device's agent has settled its charges, the usage is paid for at most once (a
/// store moved aside keeps what it paid, so its monitors are left out of that check).
public final class UsageWorkload: SimulationWorkload {
    public let name = "usage"
    public let weight: Int

    private struct Monitor {
        var id: MonitorID
        var phantom: Bool
        /// A phantom burst: its events are delivered together, or not yet.
        var burst = false
        /// Every event the monitor will deliver, in the order it fires.
        var events: [FiredThreshold]
        /// The highest threshold any device recorded.
        var recordedMs: Int64 = 0
        /// Replicas that recorded an event of it from a store later moved aside.
        var recordedBeforeAReset: Set<Int> = []
        var recordedBy: Set<Int> = []
    }

    private var monitors: [Monitor] = []

    public init(weight: Int = 2) {
        self.weight = weight
    }

    public func perform(on replica: SimulatedReplica, random: inout SeededGenerator) -> String? {
        let now = replica.physicalMillis
        if monitors.isEmpty || Int.random(in: 0..<4, using: &random) == 0 {
            monitors.append(Self.arm(number: monitors.count, before: now, random: &random))
        }
        let index = Int.random(in: monitors.indices, using: &random)
        let monitor = monitors[index]
        // What the monitor has delivered by this device's clock: a burst all at once, else one to three of the
        // thresholds fired so far, not necessarily new to the group.
        let fired = monitor.events.filter { $0.at <= now }
        guard !fired.isEmpty, !monitor.burst || fired.count == monitor.events.count else { return nil }
        let delivered: [FiredThreshold]
        if monitor.burst {
            delivered = fired
        } else {
            let count = Int.random(in: 1...min(3, fired.count), using: &random)
            delivered = Array(fired.shuffled(using: &random).prefix(count)).sorted { $0.at < $1.at }
        }
        var book = BalanceWorkload.book(on: replica)
        var outcomes: [String] = []
        for event in delivered {
            let threshold = try! UsageThresholdName(parsing: event.event)
            let outcome = book.recordUsage(monitor: monitor.id, threshold: threshold, at: event.at)
            outcomes.append("\(event.event) \(outcome.reason.rawValue) charged \(outcome.chargedMs)")
        }
        BalanceWorkload.save(book, on: replica)
        monitors[index].recordedMs = max(monitor.recordedMs, delivered.map(\.usedMs).max() ?? 0)
        monitors[index].recordedBy.insert(replica.index)
        return "usage \(monitor.phantom ? "phantom" : "genuine") monitor \(monitor.id): " + outcomes.joined(separator: ", ")
    }

    /// A monitor armed up to 20 minutes before `now`, with its events: genuine thresholds in quarter-minute
    /// steps up to 10 minutes, each firing up to 2 s after its usage could have run; or a phantom's.
    private static func arm(number: Int, before now: Int64, random: inout SeededGenerator) -> Monitor {
        let id = MonitorID(activity: "monitor\(number)", armedAt: now - Int64.random(in: 0...20 * 60_000, using: &random))
        var quarters: [Int64] = []
        var next = Int64.random(in: 1...4, using: &random)
        while next <= 40 {
            quarters.append(next)
            next += Int64.random(in: 1...8, using: &random)
        }
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            // Too early: each fires before its usage could have run since the arming. (Steps of at most 8
            // quarters from at most 4 always pass 4, so there is one at least.)
            let events = quarters.filter { $0 >= 4 }.prefix(3).map { quarter in
                event(id, quarter, at: id.armedAt + Int64.random(in: 0...(quarter * 15_000 - UsageVerdict.earlySlackMs - 1_000), using: &random))
            }
            return Monitor(id: id, phantom: true, events: events)
        case 1:
            // A burst: two or three thresholds spanning a minute or more of usage, within 2 s, late enough for
            // guard 1.
            let low = Int64.random(in: 1...20, using: &random), high = low + Int64.random(in: 5...20, using: &random)
            let steps = [low, high] + (Bool.random(using: &random) ? [Int64.random(in: low...high, using: &random)] : [])
            let start = id.armedAt + high * 15_000 + Int64.random(in: 0...5 * 60_000, using: &random)
            var events: [FiredThreshold] = []
            for quarter in Set(steps).sorted() { events.append(event(id, quarter, at: start + Int64(events.count) * Int64.random(in: 0...900, using: &random))) }
            return Monitor(id: id, phantom: true, burst: true, events: events)
        default:
            let events = quarters.map { event(id, $0, at: id.armedAt + $0 * 15_000 + Int64.random(in: 0...2_000, using: &random)) }
            return Monitor(id: id, phantom: false, events: events)
        }
    }

    private static func event(_ monitor: MonitorID, _ quarters: Int64, at: Int64) -> FiredThreshold {
        let minutes = quarters % 4 == 0 ? "\(quarters / 4)" : "\(quarters / 4).\(["", "25", "5", "75"][Int(quarters % 4)])"
        return FiredThreshold(monitor: monitor, event: "used-\(minutes)", usedMs: quarters * 15_000, at: at)
    }

    public func storeWasReset(_ replica: SimulatedReplica) {
        for index in monitors.indices where monitors[index].recordedBy.contains(replica.index) {
            monitors[index].recordedBeforeAReset.insert(replica.index)
        }
    }

    public func verify(_ replicas: [SimulatedReplica]) -> [String] {
        guard let first = replicas.first else { return [] }
        let ledger = BalanceLedger(entries: first.store.entries)
        var problems: [String] = []
        for monitor in monitors where monitor.recordedMs > 0 {
            let expected = monitor.phantom ? 0 : monitor.recordedMs
            let counted = ledger.usageVerdict(monitor.id).usedMs
            if counted != expected {
                problems.append("usage: \(monitor.phantom ? "phantom" : "genuine") monitor \(monitor.id) counts \(counted) ms of usage, \(expected) expected")
            }
        }
        // What each device's agent does on every change, until nothing moves: with everything met, every
        // charge is settled against the same usage.
        var settled = ledger
        for _ in 0..<8 {
            var moved = false
            for replica in replicas {
                var book = BalanceBook(ledger: settled, me: BalanceWorkload.account(replica), nowMillis: replica.physicalMillis,
                                       notBeforeMillis: replica.store.clock.last.wallMillis, calendar: .utc,
                                       paired: replica.peers, syncedWithAllPaired: true)
                book.settleUsage()
                moved = moved || !book.writes.isEmpty
                settled = book.ledger
            }
            if !moved { break }
        }
        for monitor in monitors where monitor.recordedMs > 0 && monitor.recordedBeforeAReset.isEmpty {
            let usage = settled.usageVerdict(monitor.id).usedMs
            let charged = settled.charges.values.reduce(0) { $0 + ($1[monitor.id]?.ms ?? 0) }
            if charged > usage { problems.append("usage: monitor \(monitor.id) charged \(charged) ms for \(usage) ms of usage once settled") }
        }
        return problems
    }
}
