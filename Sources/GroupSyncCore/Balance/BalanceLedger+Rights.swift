/// The escrow arithmetic: which rights each device holds, from the ledger alone.
///
/// A device's rights for a day are what it drew from its quota slices, plus the extensions it
/// granted, plus day rights handed to it, minus those it handed on. Its earned rights are what was
/// earned there plus earned rights handed to it minus those it handed on. Spending takes a day's
/// rights first; whatever a day's spending exceeds them by (its *overflow*) comes out of earned rights.
/// Each device spends and hands on only what it holds in its own view, and its view of what it was
/// handed can only grow, so the sum over devices can never go below zero (Balegas et al. 2015, after
/// O'Neil's escrow method).
extension BalanceLedger {
    /// The founder whose slices count: the earliest known (by `joinedAt`, then account).
    public var root: BalanceAccount? {
        members.filter(\.value.founder).min { ($0.value.joinedAt, $0.key) < ($1.value.joinedAt, $1.key) }?.key
    }

    /// Every account that appears in the ledger.
    public var accounts: Set<BalanceAccount> {
        var all = Set(members.keys).union(days.keys).union(earned.keys).union(charges.keys)
        for (from, targets) in dayTransfers { all.insert(from); all.formUnion(targets.keys) }
        for (from, targets) in earnedTransfers { all.insert(from); all.formUnion(targets.keys) }
        return all
    }

    /// The slices `account` owns on `day`, or, with `nil`, once every known gift and succession has taken effect.
    public func slices(of account: BalanceAccount, on day: CivilDate?) -> QuotaSlices {
        sliceOwners(on: day)[account] ?? .none
    }

    /// Who owns which slices on `day`: the root's whole quota, moved by gifts and successions in day order.
    ///
    /// Within a day, successions come first (an heir may give inherited slices from the day it inherits
    /// them), then every gift's receiving, then every gift's giving (a device that receives a range and
    /// passes it on the same day ends without it). A gift by or to a retired account, or a succession of
    /// one already succeeded, acts on whoever holds its slices now, so no slice is ever owned twice.
    func sliceOwners(on day: CivilDate?) -> [BalanceAccount: QuotaSlices] {
        guard let root else { return [:] }
        enum Move { case succession(from: BalanceAccount, to: BalanceAccount), receive(BalanceAccount, Range<Int64>), give(BalanceAccount, Range<Int64>) }
        var moves: [(day: CivilDate, phase: Int, move: Move)] = []
        for (from, to, fromDay) in successions where day == nil || fromDay <= day! {
            moves.append((fromDay, 0, .succession(from: from, to: to)))
        }
        for (giver, list) in gifts.sorted(by: { $0.key < $1.key }) {
            for gift in list where gift.root == root && gift.to != giver && (day == nil || gift.fromDay <= day!) {
                moves.append((gift.fromDay, 1, .receive(gift.to, gift.slices)))
                moves.append((gift.fromDay, 2, .give(giver, gift.slices)))
            }
        }
        moves.sort { ($0.day, $0.phase) < ($1.day, $1.phase) }
        var owned: [BalanceAccount: QuotaSlices] = [root: .whole]
        var successor: [BalanceAccount: BalanceAccount] = [:]
        func holder(_ account: BalanceAccount) -> BalanceAccount {
            var current = account
            // Successions only run from an earlier member to a later one, so this chain ends.
            while let next = successor[current] { current = next }
            return current
        }
        for (_, _, move) in moves {
            switch move {
            case .succession(let from, let to):
                let heir = holder(to)
                for range in owned[from]?.ranges ?? [] { owned[heir, default: .none].formUnion(range) }
                owned[from] = nil
                successor[from] = to
            case .receive(let to, let range): owned[holder(to), default: .none].formUnion(range)
            case .give(let giver, let range): owned[holder(giver)]?.subtract(range)
            }
        }
        return owned
    }

    /// The allowance `account` draws for `day`: its recorded draw, raised on `today` to the current
    /// policy's share (a raise is always safe; a cut never shrinks what was drawn). Unrecorded days
    /// count at the share of the base in force that day (`BalancePolicy.dailyBaseMs(on:)`).
    public func allowanceDrawMs(of account: BalanceAccount, on day: CivilDate, today: CivilDate) -> Int64 {
        let record = days[account]?[day]
        if let record, day != today { return record.allowanceMs }
        return max(record?.allowanceMs ?? 0, slices(of: account, on: day).share(of: policy.dailyBaseMs(on: day)))
    }

    /// The extension slots `account` draws for `day`: today, its share of the cap in force, a cut included.
    /// Unlike minutes, a drawn slot is no promise kept to anyone until an extension uses it, so a cut takes
    /// unused ones back at once: kept at their old draw, two connected devices that both knew of a cut to 1
    /// each granted "extension 1 of 1" (found by review), since the cap was checked only against the uses
    /// each had seen. Every device that knows the cut now holds its share of it, and slots handed on under
    /// another cap no longer count (`DayTransfer.slotsCap`): the shares alone add up to the cap.
    public func slotDraw(of account: BalanceAccount, on day: CivilDate, today: CivilDate) -> Int64 {
        let record = days[account]?[day]
        if let record, day != today { return record.slots }
        return slices(of: account, on: day).share(of: policy.maxExtensions)
    }

    func transfersIn(to account: BalanceAccount, on day: CivilDate) -> DayTransfer {
        var sum = DayTransfer()
        for (from, targets) in dayTransfers where from != account {
            if let t = targets[account]?[day] { sum.ms = sum.ms.saturatingAdding(t.ms); sum.slots = sum.slots.saturatingAdding(t.slots(under: policy.maxExtensions)) }
        }
        return sum
    }

    func transfersOut(from account: BalanceAccount, on day: CivilDate) -> DayTransfer {
        var sum = DayTransfer()
        for (to, byDay) in dayTransfers[account] ?? [:] where to != account {
            if let t = byDay[day] { sum.ms = sum.ms.saturatingAdding(t.ms); sum.slots = sum.slots.saturatingAdding(t.slots(under: policy.maxExtensions)) }
        }
        return sum
    }

    /// Minutes (ms) `account` may use on `day` before touching earned rights.
    public func dayRightsMs(of account: BalanceAccount, on day: CivilDate, today: CivilDate) -> Int64 {
        allowanceDrawMs(of: account, on: day, today: today).saturatingAdding(days[account]?[day]?.extensionMs ?? 0)
            .saturatingAdding(transfersIn(to: account, on: day).ms).saturatingSubtracting(transfersOut(from: account, on: day).ms)
    }

    /// Spent by `account` on `day`: direct spends plus usage it paid for that day.
    public func spentMs(of account: BalanceAccount, on day: CivilDate) -> Int64 {
        (days[account]?[day]?.spentMs ?? 0).saturatingAdding((charges[account] ?? [:]).values.saturatingSum { $0.ms(on: day) })
    }

    /// What `account` spent on `day` beyond its day rights (paid from earned minutes).
    public func overflowMs(of account: BalanceAccount, on day: CivilDate, today: CivilDate) -> Int64 {
        overflowMs(of: account, on: day, today: today, spent: spentMs(of: account, on: day))
    }

    private func overflowMs(of account: BalanceAccount, on day: CivilDate, today: CivilDate, spent: Int64) -> Int64 {
        spent == 0 ? 0 : max(0, spent.saturatingSubtracting(dayRightsMs(of: account, on: day, today: today)))
    }

    /// `spentMs` of every day `account` spent anything on, in one pass over its charges. Asked day by day for
    /// every such day, `spentMs` read every charge each time: quadratic in the days of use (found by a review
    /// of a simulated year, where a balance command took most of a second after 200 days).
    public func spentByDay(of account: BalanceAccount) -> [CivilDate: Int64] {
        var spent: [CivilDate: Int64] = [:]
        for (day, record) in days[account] ?? [:] where record.spentMs > 0 { spent[day] = record.spentMs }
        for charge in (charges[account] ?? [:]).values {
            for day in charge.days { spent[day] = (spent[day] ?? 0).saturatingAdding(charge.ms(on: day)) }
        }
        return spent
    }

    /// `overflowMs` of every day `account` spent anything on (zero where it stayed within its day rights).
    public func overflowByDay(of account: BalanceAccount, today: CivilDate) -> [CivilDate: Int64] {
        spentByDay(of: account).reduce(into: [:]) { overflow, day in
            overflow[day.key] = overflowMs(of: account, on: day.key, today: today, spent: day.value)
        }
    }

    public func earnedRightsMs(of account: BalanceAccount) -> Int64 {
        var total = earned[account]?.ms ?? 0
        for (from, targets) in earnedTransfers where from != account { total = total.saturatingAdding(targets[account] ?? 0) }
        for (to, ms) in earnedTransfers[account] ?? [:] where to != account { total = total.saturatingSubtracting(ms) }
        return total
    }

    /// Earned rights `account` still holds, after every day's overflow (`excludingDay`: all but that day's).
    public func earnedHeldMs(of account: BalanceAccount, today: CivilDate, excludingDay: CivilDate? = nil) -> Int64 {
        var held = earnedRightsMs(of: account)
        for (day, overflow) in overflowByDay(of: account, today: today) where day != excludingDay { held = held.saturatingSubtracting(overflow) }
        return held
    }

    /// Today's day rights `account` has not spent.
    public func dayHeldMs(of account: BalanceAccount, today: CivilDate) -> Int64 {
        max(0, dayRightsMs(of: account, on: today, today: today).saturatingSubtracting(spentMs(of: account, on: today)))
    }

    /// What `account` may spend today without asking anyone: never below zero.
    public func heldMs(of account: BalanceAccount, today: CivilDate) -> Int64 {
        dayHeldMs(of: account, today: today).saturatingAdding(max(0, earnedHeldMs(of: account, today: today)))
    }

    /// Extension slots `account` holds and has not used today.
    public func freeSlots(of account: BalanceAccount, today: CivilDate) -> Int64 {
        let t = today
        return max(0, slotDraw(of: account, on: t, today: t).saturatingAdding(transfersIn(to: account, on: t).slots)
            .saturatingSubtracting(transfersOut(from: account, on: t).slots).saturatingSubtracting(days[account]?[t]?.extensions ?? 0))
    }

    /// Whether `account` has a request out that is still valid today.
    public func hasActiveRequest(_ account: BalanceAccount, today: CivilDate) -> Bool {
        guard let request = requests[account], request.day == today, request.holdMs > 0 || request.slots > 0 else { return false }
        return request.spentBase == spentMs(of: account, on: today) && request.extensionsBase == (days[account]?[today]?.extensions ?? 0)
    }
}
