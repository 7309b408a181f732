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
    /// The founder whose slices count: the earliest known (by `joinedAt`, then ID).
    public var root: DeviceID? {
        members.filter(\.value.founder).min { ($0.value.joinedAt, $0.key) < ($1.value.joinedAt, $1.key) }?.key
    }

    /// Every device that appears in the ledger.
    public var devices: Set<DeviceID> {
        var all = Set(members.keys).union(days.keys).union(earned.keys).union(charges.keys)
        for (from, targets) in dayTransfers { all.insert(from); all.formUnion(targets.keys) }
        for (from, targets) in earnedTransfers { all.insert(from); all.formUnion(targets.keys) }
        return all
    }

    /// The slices `device` owns on `day`, or, with `nil`, once every known gift has taken effect.
    public func slices(of device: DeviceID, on day: CivilDate?) -> QuotaSlices {
        guard let root else { return .none }
        var events: [(day: CivilDate, receive: Bool, range: Range<Int64>)] = []
        for (giver, list) in gifts {
            for gift in list where gift.root == root && gift.to != giver && (day == nil || gift.fromDay <= day!) {
                if gift.to == device { events.append((gift.fromDay, true, gift.slices)) }
                if giver == device { events.append((gift.fromDay, false, gift.slices)) }
            }
        }
        events.sort { ($0.day, $0.receive ? 0 : 1) < ($1.day, $1.receive ? 0 : 1) }
        var owned = device == root ? QuotaSlices.whole : .none
        for event in events {
            if event.receive { owned.formUnion(event.range) } else { owned.subtract(event.range) }
        }
        return owned
    }

    /// The allowance `device` draws for `day`: its recorded draw, raised on `today` to the current
    /// policy's share (a raise is always safe; a cut never shrinks what was drawn). Unrecorded days
    /// count at the current share.
    public func allowanceDrawMs(of device: DeviceID, on day: CivilDate, today: CivilDate) -> Int64 {
        let record = days[device]?[day]
        if let record, day != today { return record.allowanceMs }
        return max(record?.allowanceMs ?? 0, slices(of: device, on: day).share(of: policy.dailyBaseMs))
    }

    public func slotDraw(of device: DeviceID, on day: CivilDate, today: CivilDate) -> Int64 {
        let record = days[device]?[day]
        if let record, day != today { return record.slots }
        return max(record?.slots ?? 0, slices(of: device, on: day).share(of: policy.maxExtensions))
    }

    func transfersIn(to device: DeviceID, on day: CivilDate) -> DayTransfer {
        var sum = DayTransfer()
        for (from, targets) in dayTransfers where from != device {
            if let t = targets[device]?[day] { sum.ms += t.ms; sum.slots += t.slots }
        }
        return sum
    }

    func transfersOut(from device: DeviceID, on day: CivilDate) -> DayTransfer {
        var sum = DayTransfer()
        for (to, byDay) in dayTransfers[device] ?? [:] where to != device {
            if let t = byDay[day] { sum.ms += t.ms; sum.slots += t.slots }
        }
        return sum
    }

    /// Minutes (ms) `device` may use on `day` before touching earned rights.
    public func dayRightsMs(of device: DeviceID, on day: CivilDate, today: CivilDate) -> Int64 {
        allowanceDrawMs(of: device, on: day, today: today) + (days[device]?[day]?.extensionMs ?? 0)
            + transfersIn(to: device, on: day).ms - transfersOut(from: device, on: day).ms
    }

    /// Spent by `device` on `day`: direct spends plus usage it paid for that day.
    public func spentMs(of device: DeviceID, on day: CivilDate) -> Int64 {
        (days[device]?[day]?.spentMs ?? 0) + (charges[device]?.values.filter { $0.day == day }.reduce(0) { $0 + $1.ms } ?? 0)
    }

    public func overflowMs(of device: DeviceID, on day: CivilDate, today: CivilDate) -> Int64 {
        let spent = spentMs(of: device, on: day)
        return spent == 0 ? 0 : max(0, spent - dayRightsMs(of: device, on: day, today: today))
    }

    /// Days on which `device` spent anything.
    public func spendDays(of device: DeviceID) -> Set<CivilDate> {
        var result = Set((days[device] ?? [:]).filter { $0.value.spentMs > 0 }.keys)
        for charge in (charges[device] ?? [:]).values where charge.ms > 0 { result.insert(charge.day) }
        return result
    }

    public func earnedRightsMs(of device: DeviceID) -> Int64 {
        var total = earned[device]?.ms ?? 0
        for (from, targets) in earnedTransfers where from != device { total += targets[device] ?? 0 }
        for (to, ms) in earnedTransfers[device] ?? [:] where to != device { total -= ms }
        return total
    }

    /// Earned rights `device` still holds, after every day's overflow (`excludingDay`: all but that day's).
    public func earnedHeldMs(of device: DeviceID, today: CivilDate, excludingDay: CivilDate? = nil) -> Int64 {
        var held = earnedRightsMs(of: device)
        for day in spendDays(of: device) where day != excludingDay { held -= overflowMs(of: device, on: day, today: today) }
        return held
    }

    /// Today's day rights `device` has not spent.
    public func dayHeldMs(of device: DeviceID, today: CivilDate) -> Int64 {
        max(0, dayRightsMs(of: device, on: today, today: today) - spentMs(of: device, on: today))
    }

    /// What `device` may spend today without asking anyone: never below zero.
    public func heldMs(of device: DeviceID, today: CivilDate) -> Int64 {
        dayHeldMs(of: device, today: today) + max(0, earnedHeldMs(of: device, today: today))
    }

    /// Extension slots `device` holds and has not used today.
    public func freeSlots(of device: DeviceID, today: CivilDate) -> Int64 {
        let t = today
        return max(0, slotDraw(of: device, on: t, today: t) + transfersIn(to: device, on: t).slots
            - transfersOut(from: device, on: t).slots - (days[device]?[t]?.extensions ?? 0))
    }

    /// Whether `device` has a request out that is still valid today.
    public func hasActiveRequest(_ device: DeviceID, today: CivilDate) -> Bool {
        guard let request = requests[device], request.day == today, request.holdMs > 0 || request.slots > 0 else { return false }
        return request.spentBase == spentMs(of: device, on: today) && request.extensionsBase == (days[device]?[today]?.extensions ?? 0)
    }
}
