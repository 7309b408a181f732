/// What `groupsync balance` shows: today's numbers, summed over every device.
///
/// `remainingMs = allowanceMs + extensionMs + earnedMs − spentTodayMs − owedMs`, where `earnedMs` is the
/// earned balance carried into today, and it never shows below zero.
public struct BalanceSummary: Equatable, Sendable {
    public var day: CivilDate
    public var dayStartMillis: Int64
    public var dayEndMillis: Int64
    public var allowanceMs: Int64
    public var extensionsToday: Int64
    public var maxExtensions: Int64
    public var extensionMs: Int64
    public var earnedMs: Int64
    public var spentTodayMs: Int64
    public var remainingMs: Int64
    /// Genuine usage that no device has paid for yet and that the next rights will pay (recent monitors, as
    /// the agent settles them): usage on a device that held no rights for it (offline, or past the balance).
    /// Today's is paid from the next rights that come (an earning, an extension, rights handed over); an
    /// earlier day's only from earned minutes. It is taken off `remainingMs` here rather than left to eat an
    /// earning a moment after `balance earn` reported it whole (issue 5: no hidden debt).
    public var owedMs: Int64
    /// The part of `remainingMs` held by stores moved aside (retired epochs): counted, since their spending
    /// may still be on its way, but spendable by no one (`BalanceLedger+Epochs.swift`).
    public var strandedMs: Int64
    /// What this device may spend right now without asking anyone.
    public var heldHereMs: Int64
    public var extensionSlotsHere: Int64
    public var devices: Int
    /// True once the balance reached zero through spending, until minutes are earned or an extension
    /// is granted. Derived from replicated records only, so every converged device agrees on it.
    public var timeUp: Bool
    /// The latest spend (or usage charge) on any device, epoch ms; 0 if none.
    public var lastSpendMillis: Int64
    /// Everything credited so far: every day's allowance and extensions (today's as drawn now) and every
    /// minute ever earned. A "time's up" episode lasts until a credit brings time back, so a device posts it
    /// again only once this has grown by more than the shortfall it saw: not for the spends that follow
    /// (owed usage paid bit by bit, a device spending rights it still held), not for an earning that only
    /// pays a debt, nor at a midnight that credits nothing. Spends used to name episodes, and every later
    /// spend posted it again (found by review).
    public var creditedMs: Int64
    /// How far what is owed exceeds what the devices hold: a credit smaller than this goes to the debt, and
    /// time stays up (`TimesUpEpisode` posts no new episode for it).
    public var shortfallMs: Int64
    /// No device has founded the balance yet, so there is no allowance and no extension: the device that
    /// should found it waits until it has synced once with every device it is paired with (`Membership`), so
    /// that two devices never both found it. A paired device that never connects holds it up until unpaired.
    public var waitingForPairedDevices: Bool

    /// Sums run over every account, retired epochs included: what an earlier store of a device earned,
    /// spent or still holds stays in the balance.
    public init(ledger: BalanceLedger, me: BalanceAccount, today: CivilDate, calendar: LocalCalendar) {
        day = today
        dayStartMillis = calendar.start(of: today)
        dayEndMillis = calendar.end(of: today)
        let devices = ledger.accounts.union([me])
        self.devices = ledger.memberDevices
        allowanceMs = devices.saturatingSum { ledger.allowanceDrawMs(of: $0, on: today, today: today) }
        extensionsToday = devices.saturatingSum { ledger.days[$0]?[today]?.extensions ?? 0 }
        extensionMs = devices.saturatingSum { ledger.days[$0]?[today]?.extensionMs ?? 0 }
        maxExtensions = ledger.policy.maxExtensions
        earnedMs = devices.saturatingSum { max(0, ledger.earnedHeldMs(of: $0, today: today, excludingDay: today)) }
        spentTodayMs = devices.saturatingSum { ledger.spentMs(of: $0, on: today) }
        // What the agent will pay (`BalanceBook.settleCharge`): usage of today from today's rights; usage of an
        // earlier day only from earned minutes, since that day's allowance has expired and a later day's never
        // pays for it. So an earlier day's unpaid usage is owed only as far as earned minutes can cover it.
        // Only a current store settles its charges (a store moved aside never will), and each files the
        // usage under the day it pays it from (`payDay`, never before its account joined): that day says
        // which rights may pay.
        var owedToday: Int64 = 0, owedEarlier: Int64 = 0
        for monitor in ledger.settlingMonitors(today: today) {
            guard let payDay = ledger.payers(of: monitor).compactMap({ ledger.charges[$0]?[monitor]?.day }).max() else { continue }
            let unpaid = ledger.unpaidMs(monitor)
            if payDay >= today { owedToday = owedToday.saturatingAdding(unpaid) } else { owedEarlier = owedEarlier.saturatingAdding(unpaid) }
        }
        let earnedAvailable = devices.saturatingSum { max(0, ledger.earnedHeldMs(of: $0, today: today)) }
        owedMs = owedToday.saturatingAdding(min(owedEarlier, earnedAvailable))
        strandedMs = devices.filter(ledger.isRetired).saturatingSum { ledger.heldMs(of: $0, today: today) }
        let heldMs = devices.saturatingSum { ledger.heldMs(of: $0, today: today) }
        remainingMs = max(strandedMs, heldMs.saturatingSubtracting(owedMs))
        shortfallMs = max(0, owedMs.saturatingSubtracting(heldMs.saturatingSubtracting(strandedMs)))
        heldHereMs = ledger.heldMs(of: me, today: today)
        // Slots drawn under a higher cap stay drawn when the cap is cut; what the cap leaves today bounds them
        // (shown as usable, "extend" refused them: found by review).
        extensionSlotsHere = min(ledger.freeSlots(of: me, today: today), max(0, maxExtensions.saturatingSubtracting(extensionsToday)))

        // Time is up once the balance reached zero through spending: nothing spendable is left and something
        // was spent. Nothing is asked about the order of spends and credits: a credit adds what it grants
        // and only a spend takes it away, so with nothing left every credit was spent. Ordering them was
        // tried and failed twice: by wall clocks, which may differ by the store's 5 minutes (a spend on a
        // device behind looked older than the earning it spent), and by the count of credits each spend
        // had seen, which no single spend reaches when both sides of a partition earned and spent.
        // The latest spend tells the countdown that usage moved the balance since it last posted
        // (`TimesUpEpisode`); credits, not spends, name the episodes of "time's up" (`creditedMs`).
        var lastSpend: Int64 = 0
        for (_, byDay) in ledger.days {
            for record in byDay.values { lastSpend = max(lastSpend, record.lastSpendAt) }
        }
        for (_, byMonitor) in ledger.charges {
            for charge in byMonitor.values where charge.ms > 0 { lastSpend = max(lastSpend, charge.at) }
        }
        // Minutes stranded with a retired epoch are not spendable and would otherwise keep it away for good.
        timeUp = remainingMs - strandedMs <= 0 && lastSpend > 0
        lastSpendMillis = lastSpend
        var credited = allowanceMs.saturatingAdding(extensionMs).saturatingAdding(ledger.earned.values.saturatingSum(\.ms))
        for byDay in ledger.days.values {
            for (day, record) in byDay where day < today {
                credited = credited.saturatingAdding(record.allowanceMs).saturatingAdding(record.extensionMs)
            }
        }
        creditedMs = credited
        waitingForPairedDevices = !ledger.members.values.contains(where: \.founder)
    }

    public var remainingMinutes: Double { BalanceAmount.minutes(remainingMs) }
}

extension BalanceSummary {
    /// A summary given field by field, for tests of what reads one (`TimesUpEpisode`): any field not given is
    /// zero, false, or 1970-01-01.
    init(day: CivilDate = CivilDate(ordinal: 0), dayStartMillis: Int64 = 0, dayEndMillis: Int64 = 0, allowanceMs: Int64 = 0,
         extensionsToday: Int64 = 0, maxExtensions: Int64 = 0, extensionMs: Int64 = 0, earnedMs: Int64 = 0,
         spentTodayMs: Int64 = 0, remainingMs: Int64 = 0, owedMs: Int64 = 0, strandedMs: Int64 = 0, heldHereMs: Int64 = 0,
         extensionSlotsHere: Int64 = 0, devices: Int = 0, timeUp: Bool = false, lastSpendMillis: Int64 = 0,
         creditedMs: Int64 = 0, shortfallMs: Int64 = 0, waitingForPairedDevices: Bool = false) {
        self.day = day
        self.dayStartMillis = dayStartMillis
        self.dayEndMillis = dayEndMillis
        self.allowanceMs = allowanceMs
        self.extensionsToday = extensionsToday
        self.maxExtensions = maxExtensions
        self.extensionMs = extensionMs
        self.earnedMs = earnedMs
        self.spentTodayMs = spentTodayMs
        self.remainingMs = remainingMs
        self.owedMs = owedMs
        self.strandedMs = strandedMs
        self.heldHereMs = heldHereMs
        self.extensionSlotsHere = extensionSlotsHere
        self.devices = devices
        self.timeUp = timeUp
        self.lastSpendMillis = lastSpendMillis
        self.creditedMs = creditedMs
        self.shortfallMs = shortfallMs
        self.waitingForPairedDevices = waitingForPairedDevices
    }
}
