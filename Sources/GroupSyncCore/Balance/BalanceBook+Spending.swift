/// The user's operations: spend, earn, extend, and asking connected peers for rights.
extension BalanceBook {
    /// Spends up to `ms` of what this device holds (today's rights first, then earned) and returns how
    /// much it spent. Never more than held: going offline cannot buy extra minutes. Nor more than the
    /// group has left once what it owes is paid (`BalanceSummary.remainingMs`): rights held here while
    /// another device owes usage are that usage's, not minutes to spend again (found by review: a device
    /// spent half a minute with 0 left shown everywhere).
    @discardableResult
    public mutating func spend(_ ms: Int64) -> Int64 {
        register()
        let summary = self.summary
        let spendable = max(0, summary.remainingMs.saturatingSubtracting(summary.strandedMs))
        let amount = min(max(0, ms), ledger.heldMs(of: me, today: today), spendable)
        if amount > 0 {
            var record = ownRecord(today)
            record.spentMs = record.spentMs.saturatingAdding(amount)
            record.lastSpendAt = nowMillis
            ledger.setDayRecord(record, of: me, day: today)
        }
        withdrawRequest()
        return amount
    }

    /// Adds earned minutes (e.g. push-ups) on this device; they carry over from day to day.
    public mutating func earn(_ ms: Int64, reason: String) {
        register()
        var record = ledger.earned[me] ?? EarnedRecord()
        record.ms = record.ms.saturatingAdding(max(0, ms))
        record.count = record.count.saturatingAdding(1)
        record.lastAt = nowMillis
        record.lastReason = reason
        ledger.setEarned(record, of: me)
    }

    /// Changes the daily base from today, in the policy's zone: the days before keep the base they had.
    public mutating func setDailyBase(minutes: Double) {
        ledger.setDailyBase(minutes: minutes, changedOn: today)
    }

    public enum ExtendOutcome: Equatable, Sendable {
        /// Granted: now `extensionsToday` of `max`, adding `addedMs`.
        case granted(extensionsToday: Int64, max: Int64, addedMs: Int64)
        /// Every extension of the day is used.
        case capReached(used: Int64, max: Int64)
        /// Extensions are left, but their slots are held by devices this one cannot reach now.
        case noSlotHere(used: Int64, max: Int64)
    }

    /// Grants one puzzle extension for today if the daily cap allows and this device holds a slot.
    /// Slots are escrowed like minutes, so two offline devices cannot both take the last extension.
    public mutating func extend() -> ExtendOutcome {
        register()
        let used = summary.extensionsToday
        let cap = ledger.policy.maxExtensions
        guard used < cap else { return .capReached(used: used, max: cap) }
        guard ledger.freeSlots(of: me, today: today) > 0 else { return .noSlotHere(used: used, max: cap) }
        var record = ownRecord(today)
        record.extensions = record.extensions.saturatingAdding(1)
        record.extensionMs = record.extensionMs.saturatingAdding(ledger.policy.extensionMs)
        record.lastExtendAt = nowMillis
        ledger.setDayRecord(record, of: me, day: today)
        withdrawRequest()
        return .granted(extensionsToday: used.saturatingAdding(1), max: cap, addedMs: ledger.policy.extensionMs)
    }

    /// Asks connected peers to hand this device enough rights to hold `holdMs` and `slots` free slots.
    public mutating func request(holdMs: Int64, slots: Int64 = 0) {
        register()
        let request = RightsRequest(day: today, holdMs: max(0, holdMs), slots: max(0, slots),
                                    spentBase: ledger.spentMs(of: me, on: today),
                                    extensionsBase: ledger.days[me]?[today]?.extensions ?? 0, at: nowMillis)
        ledger.setRequest(request, of: me)
    }

    /// `extend`, keeping nothing of a refused attempt but the withdrawal of this device's request to peers (a
    /// no-op when there is none): left open, it would keep this device from answering the others' requests and
    /// spreading its idle rights for the rest of the day (`hasActiveRequest`).
    public mutating func extendOrWithdrawRequest() -> ExtendOutcome {
        var trial = self
        let outcome = trial.extend()
        if case .granted = outcome { self = trial } else { withdrawRequest() }
        return outcome
    }

    /// Clears an open request: after an attempt, peers must stop sending for it.
    public mutating func withdrawRequest() {
        guard let open = ledger.requests[me], open.holdMs > 0 || open.slots > 0 else { return }
        ledger.setRequest(RightsRequest(day: open.day, holdMs: 0, slots: 0, spentBase: open.spentBase,
                                        extensionsBase: open.extensionsBase, at: nowMillis), of: me)
    }
}
