/// The balance in the simulator: devices set the policy (a daily allowance, a cap on extensions), earn,
/// spend, take puzzle extensions, ask for rights and run the daemon agent's rebalance, each through the real
/// `BalanceBook` on the replica's own store, while the simulator partitions, drops, crashes and skews clocks
/// around them. (Usage thresholds are `UsageWorkload`'s.)
///
/// Promises checked: at every moment no device's own view shows it holding less than nothing (it spent only
/// what it held — going offline never bought minutes), and once converged every replica shows the same
/// balance, in which every acknowledged earn, spend and extension is counted exactly once, and no day has
/// more extensions than the cap allowed, however the devices were partitioned — in every run, including
/// runs in which a store was moved aside (the device then writes as a new account, `BalanceAccount`).
public final class BalanceWorkload: SimulationWorkload {
    public let name = "balance"
    public let weight: Int
    private var acknowledgedEarnedMs: Int64 = 0
    private var acknowledgedSpentMs: Int64 = 0
    /// Extensions granted, by the day they were filed under.
    private var grantedExtensions: [CivilDate: Int64] = [:]
    /// The run's policy: the daily allowance (which may change) and the cap on extensions (which does not, so
    /// that the cap is what every device judged by).
    private var policy: (baseMinutes: Int64, cap: Int64)?
    /// Replicas whose store holds the policy because they wrote it, as an app sets it up before its first
    /// use; a store moved aside starts empty, and its device writes it again.
    private var policySetOn: Set<Int> = []

    public init(weight: Int = 3) {
        self.weight = weight
    }

    /// The account a replica writes its balance records under: its device and its current store.
    static func account(_ replica: SimulatedReplica) -> BalanceAccount {
        BalanceAccount(device: replica.device, epoch: replica.store.storeID)
    }

    /// The balance as `replica`'s app sees it now, as `Store.updateBalance` builds it: paired with every other
    /// replica, founding the balance only once it has caught up with each one (see `perform`), and with the
    /// store's hybrid clock as the time it does not go back before when the clock is set back.
    static func book(on replica: SimulatedReplica) -> BalanceBook {
        BalanceBook(ledger: BalanceLedger(entries: replica.store.entries), me: account(replica), nowMillis: replica.physicalMillis,
                    notBeforeMillis: replica.store.clock.last.wallMillis, calendar: .utc, paired: replica.peers,
                    syncedWithAllPaired: replica.hasCaughtUpWithEveryPeer)
    }

    /// Writes what `book` changed into `replica`'s store, in key order (one write per key, as the store's
    /// transaction would).
    static func save(_ book: BalanceBook, on replica: SimulatedReplica) {
        for (key, value) in book.writes.sorted(by: { $0.key < $1.key }) {
            replica.store.set(value, suite: BalanceSuite.name, key: key, physicalMillis: replica.physicalMillis)
        }
    }

    public func perform(on replica: SimulatedReplica, random: inout SeededGenerator) -> String? {
        let now = replica.physicalMillis
        // Paired with every other replica; founding the balance waits until it has caught up with each one once,
        // as in `Store.updateBalance`. The extension cap below caught two ways round it: every device counted as
        // synced, so two that never met each founded one; and a store moved aside, which counted as synced once
        // a first batch from each peer was in and founded again before the old founder's record arrived.
        var book = Self.book(on: replica)
        let line: String
        // A device's first operation sets the run's policy, so that days have an allowance and extensions a
        // cap that every device knows before it extends; later, the allowance may change.
        let newBase = Int64.random(in: 0...12, using: &random) * 5
        let policy = self.policy ?? (newBase, Int64.random(in: 1...3, using: &random))
        self.policy = policy
        let operation = policySetOn.contains(replica.index) ? Int.random(in: 0..<12, using: &random) : -1
        switch operation {
        case -1:
            policySetOn.insert(replica.index)
            replica.store.set(.int(policy.baseMinutes), suite: BalanceSuite.name, key: BalancePolicy.Key.dailyBase, physicalMillis: now)
            replica.store.set(.int(policy.cap), suite: BalanceSuite.name, key: BalancePolicy.Key.maxExtensions, physicalMillis: now)
            return "balance policy daily base \(policy.baseMinutes) min, at most \(policy.cap) extensions"
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
            let hold = Int64.random(in: 0...80, using: &random) * 15_000, slots = Int64.random(in: 0...1, using: &random)
            book.request(holdMs: hold, slots: slots)
            line = "balance request \(hold) ms, \(slots) slots"
        case 6..<9:
            let outcome = book.extendOrWithdrawRequest()
            switch outcome {
            case .granted: grantedExtensions[book.today, default: 0] += 1
            // As `balance extend` does, it asks the peers for a slot (the command then waits for one; here a
            // later extension may find it).
            case .noSlotHere: book.request(holdMs: 0, slots: 1)
            case .capReached: break
            }
            line = "balance extend: \(outcome)"
        case 9:
            self.policy = (newBase, policy.cap)
            replica.store.set(.int(newBase), suite: BalanceSuite.name, key: BalancePolicy.Key.dailyBase, physicalMillis: now)
            return "balance policy daily base \(newBase) min"
        default:
            // Who is connected is the daemon's knowledge, not the core's; offering idle rights to a device
            // that is away only parks them there, which can never make anyone overspend.
            book.rebalance(connected: replica.peers)
            line = "balance rebalance"
        }
        Self.save(book, on: replica)
        return line
    }

    public func storeWasReset(_ replica: SimulatedReplica) {
        policySetOn.remove(replica.index)
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
        var extensions: [CivilDate: Int64] = [:]
        for byDay in ledger.days.values { for (day, record) in byDay { extensions[day, default: 0] += record.extensions } }
        for day in Set(extensions.keys).union(grantedExtensions.keys).sorted() where extensions[day, default: 0] != grantedExtensions[day, default: 0] {
            problems.append("balance: \(grantedExtensions[day, default: 0]) extensions granted on \(day), \(extensions[day, default: 0]) counted")
        }
        for (day, count) in extensions.sorted(by: { $0.key < $1.key }) where count > policy?.cap ?? 0 {
            problems.append("balance: \(count) extensions on \(day), above the cap of \(policy?.cap ?? 0)")
        }
        let now = first.physicalMillis
        let summaries = replicas.map {
            BalanceBook(ledger: BalanceLedger(entries: $0.store.entries), me: Self.account($0), nowMillis: now, calendar: .utc,
                        paired: $0.peers, syncedWithAllPaired: true).summary
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
