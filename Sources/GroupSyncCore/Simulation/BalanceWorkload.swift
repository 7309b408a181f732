/// The balance in the simulator: devices earn, spend, ask for rights and run the daemon agent's rebalance,
/// each through the real `BalanceBook` on the replica's own store, while the simulator partitions, drops,
/// crashes and skews clocks around them.
///
/// Promises checked: at every moment no device's own view shows it holding less than nothing (it spent only
/// what it held — going offline never bought minutes), and once converged every replica shows the same
/// balance, in which every acknowledged earn and spend is counted exactly once — in every run, including
/// runs in which a store was moved aside (the device then writes as a new account, `BalanceAccount`).
public final class BalanceWorkload: SimulationWorkload {
    public let name = "balance"
    public let weight: Int
    private var devices: Set<DeviceID> = []
    private var acknowledgedEarnedMs: Int64 = 0
    private var acknowledgedSpentMs: Int64 = 0

    public init(weight: Int = 3) {
        self.weight = weight
    }

    /// The account a replica writes its balance records under: its device and its current store.
    static func account(_ replica: SimulatedReplica) -> BalanceAccount {
        BalanceAccount(device: replica.device, epoch: replica.store.storeID)
    }

    public func perform(on replica: SimulatedReplica, random: inout SeededGenerator) -> String? {
        devices.insert(replica.device)
        let now = replica.physicalMillis
        let others = devices.subtracting([replica.device])
        var book = BalanceBook(ledger: BalanceLedger(entries: replica.store.entries), me: Self.account(replica), nowMillis: now,
                               calendar: .utc, paired: others, syncedWithAllPaired: true)
        let line: String
        switch Int.random(in: 0..<8, using: &random) {
        case 0..<3:
            let asked = Int64.random(in: 1...40, using: &random) * 15_000
            let spent = book.spend(asked)
            acknowledgedSpentMs += spent
            line = "balance spend \(asked) ms: spent \(spent)"
        case 3..<5:
            let amount = Int64.random(in: 1...40, using: &random) * 15_000
            book.earn(amount, reason: "")
            acknowledgedEarnedMs += amount
            line = "balance earn \(amount) ms"
        case 5:
            let hold = Int64.random(in: 0...80, using: &random) * 15_000
            book.request(holdMs: hold)
            line = "balance request \(hold) ms"
        default:
            // Who is connected is the daemon's knowledge, not the core's; offering idle rights to a device
            // that is away only parks them there, which can never make anyone overspend.
            book.rebalance(connected: others)
            line = "balance rebalance"
        }
        for (key, value) in book.writes.sorted(by: { $0.key < $1.key }) {
            replica.store.set(value, suite: BalanceSuite.name, key: key, physicalMillis: now)
        }
        return line
    }

    /// A device's own view of itself: it spends only what that view shows it holding, and the view only gains
    /// (rights handed to it arrive, its own writes never leave), so it never shows less than nothing. Other
    /// devices' views may lag (a spend arriving before the transfer that paid for it); `verify` judges those
    /// once everything has met. A store moved aside is a fresh account with nothing to come back, so it
    /// stays a fair witness of itself from its first write.
    public func observe(_ replica: SimulatedReplica) -> [String] {
        let ledger = BalanceLedger(entries: replica.store.entries)
        let today = LocalCalendar.utc.day(atUTCMillis: replica.physicalMillis)
        let held = ledger.earnedHeldMs(of: Self.account(replica), today: today)
        return held < 0 ? ["\(replica.name) holds \(held) ms of earned minutes by its own books: an overspend"] : []
    }

    public func verify(_ replicas: [SimulatedReplica]) -> [String] {
        guard let first = replicas.first else { return [] }
        let ledger = BalanceLedger(entries: first.store.entries)
        let spent = ledger.days.values.reduce(0) { sum, byDay in sum + byDay.values.reduce(0) { $0 + $1.spentMs } }
        let earned = ledger.earned.values.reduce(0) { $0 + $1.ms }
        var problems: [String] = []
        if spent != acknowledgedSpentMs { problems.append("balance: \(acknowledgedSpentMs) ms of spends acknowledged, \(spent) ms counted") }
        if earned != acknowledgedEarnedMs { problems.append("balance: \(acknowledgedEarnedMs) ms of earnings acknowledged, \(earned) ms counted") }
        let now = first.physicalMillis
        let summaries = replicas.map {
            BalanceBook(ledger: BalanceLedger(entries: $0.store.entries), me: Self.account($0), nowMillis: now, calendar: .utc,
                        paired: devices.subtracting([$0.device]), syncedWithAllPaired: true).summary
        }
        let today = LocalCalendar.utc.day(atUTCMillis: now)
        for account in ledger.accounts where ledger.earnedHeldMs(of: account, today: today) < 0 {
            problems.append("balance: account \(account.short) spent \(-ledger.earnedHeldMs(of: account, today: today)) ms more than it held")
        }
        for (replica, summary) in zip(replicas, summaries) {
            if summary.remainingMs != summaries[0].remainingMs {
                problems.append("balance: \(replica.name) shows \(summary.remainingMs) ms remaining, \(first.name) \(summaries[0].remainingMs)")
            }
            if summary.remainingMs < 0 { problems.append("balance: \(replica.name) shows a negative balance") }
        }
        return problems
    }
}
