/// What the daemon's balance agent does on every change: spread quota slices to new members, answer
/// requests, refund expired day rights to devices that dipped into earned minutes, and keep idle
/// rights (minutes and extension slots) spread over the connected devices so each could spend an even
/// share if it went offline.
///
/// Every step hands on only what this device holds and writes only keys it owns; when everything is
/// balanced it writes nothing, so the agent's own writes settle instead of waking it forever.
extension BalanceBook {
    /// Below this, moving rights is not worth a write: one usage threshold step.
    public static let smallestTransferMs: Int64 = 15_000

    /// One pass of the agent. `connected`: the peers with a live session now (each acts as its latest epoch).
    public mutating func rebalance(connected: Set<DeviceID>) {
        register()
        withdrawStaleOwnRequest()
        settleUsage()
        spreadQuota()
        answerRequests()
        refundExpiredDays()
        coverDebts(connected: connected)
        spreadIdleRights(connected: connected)
    }

    /// Gives this device's quota slices above an even share to members below it, from `nextGiftDay`.
    /// Retired epochs get nothing: their slices pass to the device's later epoch anyway.
    mutating func spreadQuota() {
        let live = ledger.liveMembers
        guard let root = ledger.root, !live.isEmpty else { return }
        let fair = QuotaSlices.total / Int64(live.count)
        var mine = ledger.slices(of: me, on: nil)
        guard mine.count > fair else { return }
        let fromDay = nextGiftDay
        var gifts: [QuotaGift] = []
        for member in live where member != me {
            let theirs = ledger.slices(of: member, on: nil).count
            let n = min(fair - theirs, mine.count - fair)
            guard n > 0 else { continue }
            for range in mine.top(n).ranges {
                gifts.append(QuotaGift(to: member, root: root, slices: range, fromDay: fromDay))
                mine.subtract(range)
            }
        }
        if !gifts.isEmpty { ledger.addGifts(gifts, by: me) }
    }

    /// How long this device's own request to peers stays open. The command that makes one waits at most 2 s
    /// for answers and then withdraws it; one left open (the command interrupted or killed in between) would
    /// keep this device from answering the others and from spreading its idle rights for the rest of the day,
    /// so the whole balance could no longer be spent from them. Judged by this device's clock, which wrote it.
    static let ownRequestLifetimeMillis: Int64 = 30_000

    /// When this device's open request outlives `ownRequestLifetimeMillis`, if one is open: the daemon runs
    /// its agent again then, so a forgotten request is withdrawn even when nothing else touches the balance.
    public var ownRequestExpiryMillis: Int64? {
        guard let open = ledger.requests[me], ledger.hasActiveRequest(me, today: today) else { return nil }
        return open.at.saturatingAdding(Self.ownRequestLifetimeMillis + 1)
    }

    /// Withdraws this device's request once it has outlived `ownRequestLifetimeMillis`: the daemon's agent runs
    /// this whenever the balance changes (a peer's request ends a forgotten one before it is answered), and
    /// again at `ownRequestExpiryMillis`.
    mutating func withdrawStaleOwnRequest() {
        guard let expiry = ownRequestExpiryMillis, nowMillis >= expiry else { return }
        withdrawRequest()
    }

    /// Hands requesting devices what they lack, as far as this device holds it (unless it is asking too).
    /// A retired epoch's request is left unanswered: nothing handed to it could ever be spent.
    mutating func answerRequests() {
        guard !ledger.hasActiveRequest(me, today: today) else { return }
        for (device, request) in ledger.requests.sorted(by: { $0.key < $1.key })
        where device != me && !ledger.isRetired(device) && ledger.hasActiveRequest(device, today: today) {
            let needMs = request.holdMs.saturatingSubtracting(ledger.heldMs(of: device, today: today))
            if needMs > 0 { give(min(needMs, ledger.heldMs(of: me, today: today)), to: device) }
            let needSlots = request.slots.saturatingSubtracting(ledger.freeSlots(of: device, today: today))
            let slots = min(needSlots, ledger.freeSlots(of: me, today: today))
            if slots > 0 { giveSlots(slots, to: device) }
        }
    }

    /// Hands `ms` to `device`: today's day rights first (they expire tonight), then earned rights.
    mutating func give(_ ms: Int64, to device: BalanceAccount) {
        guard ms > 0 else { return }
        let fromDay = min(ms, ledger.dayHeldMs(of: me, today: today))
        if fromDay > 0 { giveDayRights(fromDay, to: device, day: today) }
        let fromEarned = min(ms.saturatingSubtracting(fromDay), max(0, ledger.earnedHeldMs(of: me, today: today)))
        if fromEarned > 0 { ledger.setEarnedTransfer((ledger.earnedTransfers[me]?[device] ?? 0).saturatingAdding(fromEarned), from: me, to: device) }
    }

    /// Hands `slots` of today's free extension slots to `device`.
    mutating func giveSlots(_ slots: Int64, to device: BalanceAccount) {
        freezeDraw(today)
        var transfer = ledger.dayTransfers[me]?[device]?[today] ?? DayTransfer()
        // Slots handed on under another cap count for nothing now: the running total starts again.
        if transfer.slotsCap != ledger.policy.maxExtensions { transfer.slots = 0 }
        transfer.slotsCap = ledger.policy.maxExtensions
        transfer.slots = transfer.slots.saturatingAdding(slots)
        ledger.setDayTransfer(transfer, from: me, to: device, day: today)
    }

    mutating func giveDayRights(_ ms: Int64, to device: BalanceAccount, day: CivilDate) {
        freezeDraw(day)
        var transfer = ledger.dayTransfers[me]?[device]?[day] ?? DayTransfer()
        transfer.ms = transfer.ms.saturatingAdding(ms)
        ledger.setDayTransfer(transfer, from: me, to: device, day: day)
    }

    /// After a partition one device may have dipped into earned minutes while another's day rights
    /// expired unused. Spending takes the day's allowance first, so the expired rights are handed to
    /// the device that overflowed, which gives its earned minutes back. Expired rights are worth
    /// nothing else, so this is safe even towards a device that is not connected.
    mutating func refundExpiredDays() {
        // Each device's overflow is read once for all its days (`overflowByDay`); a refund to one device on one
        // day changes no other device's overflow, nor that device's on another day.
        var overflowing: [CivilDate: [(device: BalanceAccount, ms: Int64)]] = [:]
        for device in ledger.accounts where device != me {
            for (day, ms) in ledger.overflowByDay(of: device, today: today) where day < today && ms > 0 {
                overflowing[day, default: []].append((device, ms))
            }
        }
        let mySpending = overflowing.isEmpty ? [:] : ledger.spentByDay(of: me)
        for (day, devices) in overflowing.sorted(by: { $0.key < $1.key }) {
            var leftover = ledger.dayRightsMs(of: me, on: day, today: today).saturatingSubtracting(mySpending[day] ?? 0)
            for (device, overflow) in devices.sorted(by: { $0.device < $1.device }) where leftover > 0 {
                let amount = min(leftover, overflow)
                giveDayRights(amount, to: device, day: day)
                leftover -= amount
            }
        }
    }

    /// Hands connected peers the rights for usage they recorded and could not pay: only a device that keeps a
    /// charge for a monitor pays its usage (`settleCharge`), so rights held elsewhere would otherwise sit
    /// beside the debt — every device showing 0 left while together they held what was owed, and spending it
    /// (found by review). Each holder gives its proportional part of what the debtor lacks, as
    /// `spreadIdleRights` does, so holders acting on one view hand over the debt once between them; any
    /// excess only moves rights, and the debtor's agent pays from them at once. Today's usage is paid with
    /// today's rights first; an earlier day's only with earned minutes, as `available(on:)` allows.
    mutating func coverDebts(connected: Set<DeviceID>) {
        guard !ledger.hasActiveRequest(me, today: today) else { return }
        let peers = Set(connected.compactMap { ledger.liveAccount(of: $0) }).subtracting([me])
        guard !peers.isEmpty else { return }
        var owedToday: [BalanceAccount: Int64] = [:], owedEarlier: [BalanceAccount: Int64] = [:]
        for monitor in ledger.settlingMonitors(today: today).sorted() {
            let payers = ledger.payers(of: monitor)
            // A monitor this device keeps a charge for, it pays itself (`settleUsage`).
            guard !payers.contains(me), let debtor = payers.filter(peers.contains).min() else { continue }
            let unpaid = ledger.unpaidMs(monitor)
            guard unpaid > 0, let day = ledger.charges[debtor]?[monitor]?.day else { continue }
            if day >= today { owedToday[debtor, default: 0] = owedToday[debtor, default: 0].saturatingAdding(unpaid) }
            else { owedEarlier[debtor, default: 0] = owedEarlier[debtor, default: 0].saturatingAdding(unpaid) }
        }
        guard !owedToday.isEmpty || !owedEarlier.isEmpty else { return }
        // The holders who would give: this device and the connected peers owing nothing.
        let holders = Set(peers.subtracting(owedToday.keys).subtracting(owedEarlier.keys)).union([me])
        for debtor in Set(owedToday.keys).union(owedEarlier.keys).sorted() {
            let earlier = max(0, (owedEarlier[debtor] ?? 0).saturatingSubtracting(max(0, ledger.earnedHeldMs(of: debtor, today: today))))
            if earlier > 0 {
                let part = Self.share(of: earlier, mine: max(0, ledger.earnedHeldMs(of: me, today: today)),
                                      all: holders.map { max(0, ledger.earnedHeldMs(of: $0, today: today)) }.saturatingSum { $0 })
                if part > 0 { ledger.setEarnedTransfer((ledger.earnedTransfers[me]?[debtor] ?? 0).saturatingAdding(part), from: me, to: debtor) }
            }
            let lacking = (owedToday[debtor] ?? 0).saturatingSubtracting(ledger.heldMs(of: debtor, today: today))
            if lacking > 0 {
                give(Self.share(of: lacking, mine: ledger.heldMs(of: me, today: today),
                                all: holders.map { ledger.heldMs(of: $0, today: today) }.saturatingSum { $0 }), to: debtor)
            }
        }
    }

    /// This holder's part of `amount` when holders give in proportion to what they hold (`mine` of `all`),
    /// rounded up so that the parts cover it, and never more than it holds.
    static func share(of amount: Int64, mine: Int64, all: Int64) -> Int64 {
        guard amount > 0, mine > 0, all > 0 else { return 0 }
        guard all > amount else { return min(mine, amount) }
        let part = amount.scaled(by: mine, dividedBy: all)
        return min(mine, amount, part < Int64.max ? part + 1 : part)
    }

    /// Evens out today's idle day rights and earned rights over the connected members. Each device
    /// above the mean gives its proportional part of every deficit, so devices acting on the same
    /// view hand over exactly the deficit between them, not once each.
    mutating func spreadIdleRights(connected: Set<DeviceID>) {
        guard !ledger.hasActiveRequest(me, today: today) else { return }
        let group = Set(connected.compactMap { ledger.liveAccount(of: $0) }).union([me]).sorted()
        guard group.count > 1 else { return }
        spreadIdleSlots(group)
        for pool in [Pool.day, .earned] {
            let held = group.map { heldIn(pool, of: $0) }
            // Held amounts are never negative, so the differences below fit; the sums and the product saturate
            // or run at full width (`SaturatingArithmetic.swift`).
            let mean = held.saturatingSum { $0 } / Int64(group.count)
            let mySurplus = held[group.firstIndex(of: me)!] - mean
            guard mySurplus >= Self.smallestTransferMs else { continue }
            let totalSurplus = held.filter { $0 > mean }.saturatingSum { $0 - mean }
            for (device, amount) in zip(group, held) where device != me && mean - amount >= Self.smallestTransferMs {
                let part = (mean - amount).scaled(by: mySurplus, dividedBy: totalSurplus)
                guard part >= Self.smallestTransferMs else { continue }
                switch pool {
                case .day: giveDayRights(part, to: device, day: today)
                case .earned: ledger.setEarnedTransfer((ledger.earnedTransfers[me]?[device] ?? 0).saturatingAdding(part), from: me, to: device)
                }
            }
        }
    }

    private enum Pool { case day, earned }

    private func heldIn(_ pool: Pool, of device: BalanceAccount) -> Int64 {
        switch pool {
        case .day: ledger.dayHeldMs(of: device, today: today)
        case .earned: max(0, ledger.earnedHeldMs(of: device, today: today))
        }
    }

    /// Today's free extension slots are idle rights too, spread so that a device that goes offline can still
    /// take its share of the day's extensions (found by review: slots moved only on request, and one device
    /// could end up holding every one left). Slots are whole, so they are not spread in proportion, as minutes
    /// are (2, 2, 0 would round to no move at all): every device works out the same even split, each holding
    /// the total divided by the group, the remainder staying with the largest holders, and the same pairing of
    /// surplus to shortfall, and hands over its own part of it.
    mutating func spreadIdleSlots(_ group: [BalanceAccount]) {
        let held = group.map { max(0, ledger.freeSlots(of: $0, today: today)) }
        let total = held.saturatingSum { $0 }
        guard total > 0 else { return }
        let share = total / Int64(group.count), remainder = Int(total % Int64(group.count))
        let keepingTheRemainder = Set(group.indices.sorted { (held[$1], group[$0]) < (held[$0], group[$1]) }.prefix(remainder))
        let target = group.indices.map { share + (keepingTheRemainder.contains($0) ? 1 : 0) }
        var surplus = group.indices.compactMap { held[$0] > target[$0] ? ($0, held[$0] - target[$0]) : nil }
        var shortfall = group.indices.compactMap { held[$0] < target[$0] ? ($0, target[$0] - held[$0]) : nil }
        while let (giver, extra) = surplus.first, let (taker, lacking) = shortfall.first {
            let slots = min(extra, lacking)
            if group[giver] == me { giveSlots(slots, to: group[taker]) }
            surplus[0].1 -= slots
            shortfall[0].1 -= slots
            if surplus[0].1 == 0 { surplus.removeFirst() }
            if shortfall[0].1 == 0 { shortfall.removeFirst() }
        }
    }
}
