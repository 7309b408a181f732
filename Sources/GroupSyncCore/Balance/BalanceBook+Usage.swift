/// Usage thresholds become spending: the usage of each monitor (its highest genuine threshold) is
/// paid for once, out of the rights of the devices that recorded it.
///
/// Who pays: every device that records an event of a monitor keeps a charge for it, filed under the
/// monitor's day. The *owner* tops the total up to the usage, or lowers its own charge when others already
/// paid; the others only ever add what nobody has paid for yet, and never keep more than the usage. The
/// owner is the smallest device ID among those whose charge holds something (among all of them while none
/// does), and never a store moved aside: neither can give anything back, and as owner either left two
/// charges made on both sides of a partition standing, one of them an excess for good (found by review).
/// So the same event reported twice, or by devices on both sides of a partition, is paid once when they
/// meet (with three or more reporting the same monitor in overlapping partitions, an excess can stay
/// charged, never a shortfall).
public struct UsageRecordOutcome: Equatable, Sendable {
    public var monitor: MonitorID
    public var event: String
    public var eventMs: Int64
    /// The event was already recorded (by this device or another): it changes nothing.
    public var duplicate: Bool
    public var verdict: UsageVerdict
    /// How much this device's charge for the monitor moved (negative: rights given back).
    public var chargedMs: Int64
    /// This device's charge for the monitor before the event was recorded: what `chargedMs` counts from.
    public var chargeBeforeMs: Int64
    /// Genuine usage that no device has paid for yet (this device lacked the rights).
    public var uncoveredMs: Int64

    /// Whether this event counts as genuine usage.
    public var counted: Bool { reason == .genuine }
    public var reason: UsageVerdict.Reason { verdict.reason(for: event) }
}

extension BalanceBook {
    /// Records a threshold event as the monitor delivered it and pays for any new genuine usage.
    public mutating func recordUsage(monitor: MonitorID, threshold: UsageThresholdName, at: Int64) -> UsageRecordOutcome {
        register()
        let duplicate = ledger.fired[monitor]?[threshold.name] != nil
        if !duplicate {
            ledger.recordFired(FiredThreshold(monitor: monitor, event: threshold.name, usedMs: threshold.usedMs, at: at))
        }
        if ledger.charges[me]?[monitor] == nil {
            ledger.setCharge(UsageCharge(activity: monitor.activity, armedAt: monitor.armedAt, day: payDay(at: at), ms: 0, at: 0), of: me)
        }
        let before = ledger.charges[me]?[monitor]?.ms ?? 0
        settleCharge(monitor)
        let after = ledger.charges[me]?[monitor]?.ms ?? 0
        let verdict = usageVerdict(monitor)
        return UsageRecordOutcome(monitor: monitor, event: threshold.name, eventMs: threshold.usedMs, duplicate: duplicate,
                                  verdict: verdict, chargedMs: after.saturatingSubtracting(before), chargeBeforeMs: before,
                                  uncoveredMs: uncoveredMs(monitor))
    }

    public func usageVerdict(_ monitor: MonitorID) -> UsageVerdict { ledger.usageVerdict(monitor) }

    /// Genuine usage of `monitor` that no device has paid for (as this device sees it).
    public func uncoveredMs(_ monitor: MonitorID) -> Int64 { ledger.unpaidMs(monitor) }

    /// How far back the agent keeps settling charges: a fresh monitor is armed every session, so
    /// settling them all on every change would grow without end; older ones are settled when a device
    /// records an event for them.
    public static let settlingWindowDays: Int64 = 14

    /// After `outcome`'s usage lacked rights and peers were asked: pays with what arrived (settling every recent
    /// charge, as the agent would) and withdraws the request, so peers stop sending for it. Returns the outcome
    /// with its charge counted from before the event, since the daemon's agent may have paid part of it while
    /// the command waited (counted from here, `usage record` said "spent 10 min" for 30 paid).
    public mutating func payWithArrivedRights(_ outcome: UsageRecordOutcome) -> UsageRecordOutcome {
        settleUsage()
        withdrawRequest()
        var paid = outcome
        paid.chargedMs = (ledger.charges[me]?[outcome.monitor]?.ms ?? 0).saturatingSubtracting(outcome.chargeBeforeMs)
        paid.uncoveredMs = uncoveredMs(outcome.monitor)
        return paid
    }

    /// Settles this device's charge for every recent monitor it recorded (the agent runs this on each change).
    public mutating func settleUsage() {
        let oldest = CivilDate(ordinal: today.ordinal - Self.settlingWindowDays)
        for (monitor, charge) in (ledger.charges[me] ?? [:]).sorted(by: { $0.key < $1.key }) where charge.day >= oldest {
            settleCharge(monitor)
        }
    }

    /// Moves this device's charge for `monitor` toward its part of the usage, as far as its rights allow.
    mutating func settleCharge(_ monitor: MonitorID) {
        guard var mine = ledger.charges[me]?[monitor] else { return }
        let usage = usageVerdict(monitor).usedMs
        // A store moved aside never settles again: it cannot be the owner, though what it paid still counts.
        let payers = ledger.payers(of: monitor)
        let holding = payers.filter { (ledger.charges[$0]?[monitor]?.ms ?? 0) > 0 }
        let owner = (holding.isEmpty ? payers : holding).min()
        let others = ledger.charges.filter { $0.key != me }.saturatingSum { $0.value[monitor]?.ms ?? 0 }
        let unpaid = usage.saturatingSubtracting(others)
        let target = owner == me ? max(0, unpaid) : min(usage, max(mine.ms, unpaid))
        guard target != mine.ms else { return }
        if target < mine.ms {
            // Less usage to pay for: give back from the latest day first. Giving back is always safe.
            var excess = mine.ms - target
            while excess > 0 {
                let current = mine.ms(on: mine.day)
                guard current < excess, let previous = mine.earlier.keys.max() else {
                    mine.ms -= min(excess, current)
                    break
                }
                // All of the latest day's part goes back; the day before becomes the latest.
                mine.ms -= current
                excess -= current
                mine.day = previous
                mine.earlier[previous] = nil
            }
        } else {
            // New usage is paid from the rights of the day it happened on. A charge that paid on an earlier
            // day keeps that part there and moves on, so no expired allowance pays for later use.
            let day = payDay(at: usageVerdict(monitor).latestAt)
            if day > mine.day {
                let current = mine.ms(on: mine.day)
                if current > 0 { mine.earlier[mine.day] = current }
                mine.day = day
            }
            let ms = mine.ms + min(target - mine.ms, available(on: mine.day))
            guard ms != mine.ms else {
                if ledger.charges[me]?[monitor] != mine { ledger.setCharge(mine, of: me) }
                return
            }
            mine.ms = ms
            mine.at = nowMillis
        }
        freezeDraw(mine.day)
        ledger.setCharge(mine, of: me)
    }

    /// The day usage at `at` is paid from: its local day, but not later than today (a clock ahead) nor
    /// before this account joined (no allowance was drawn for those days, and drawing it now would turn a
    /// back-dated report into free minutes). While the clock is behind what the store has already stamped
    /// (`notBeforeMillis`: it was set back), every time the app read from it is late by as much, so `at` is
    /// moved on by that lag; taken as read, usage was paid from a past day's leftover rights and today's
    /// balance never moved (found by review).
    func payDay(at: Int64) -> CivilDate {
        let joined = ledger.members[me].map { calendar.day(atUTCMillis: $0.joinedAt) } ?? today
        let lag = max(0, notBeforeMillis.saturatingSubtracting(nowMillis))
        return min(max(calendar.day(atUTCMillis: at.saturatingAdding(lag)), joined), today)
    }

    /// What this device may still spend for usage filed under `day`: today, what it holds; for an
    /// earlier day, that day's unspent rights (the usage happened then) and its earned minutes.
    func available(on day: CivilDate) -> Int64 {
        if day >= today { return ledger.heldMs(of: me, today: today) }
        let leftover = max(0, ledger.dayRightsMs(of: me, on: day, today: today).saturatingSubtracting(ledger.spentMs(of: me, on: day)))
        return leftover.saturatingAdding(max(0, ledger.earnedHeldMs(of: me, today: today)))
    }
}
