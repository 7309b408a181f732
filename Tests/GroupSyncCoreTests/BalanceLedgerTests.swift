import Testing
@testable import GroupSyncCore

/// The balance on one device: allowance, extensions, earned minutes, spending order, day boundaries.
@Suite struct BalanceLedgerTests {
    func solo(base: Double = 30, ext: Double = 5, max: Int64 = 2, zone: LocalCalendar = .utc) -> BalanceDevice {
        let device = BalanceDevice(1, calendar: zone)
        device.setPolicy(BalancePolicy.Key.dailyBase, .double(base), at: noon - day)
        device.setPolicy(BalancePolicy.Key.extensionSize, .double(ext), at: noon - day)
        device.setPolicy(BalancePolicy.Key.maxExtensions, .int(max), at: noon - day)
        return device
    }

    @Test func aSoloDeviceFoundsTheBalanceAndHoldsTheWholeAllowance() {
        let device = solo()
        device.act(at: noon) { $0.register() }
        let s = device.summary(at: noon)
        #expect(s.allowanceMs == 30 * minute)
        #expect(s.remainingMs == 30 * minute)
        #expect(s.heldHereMs == 30 * minute)
        #expect(s.extensionSlotsHere == 2)
        #expect(!s.timeUp)
    }

    /// A balance that is empty because nothing was granted (a daily base of 0, nothing earned) is not "time's
    /// up": time is up once spending brought it to zero.
    @Test func anEmptyBalanceNothingWasSpentFromIsNotTimeUp() {
        let device = solo(base: 0)
        device.act(at: noon) { $0.register() }
        #expect(device.summary(at: noon).remainingMs == 0)
        #expect(!device.summary(at: noon).timeUp)
        device.act(at: noon) { $0.earn(minute, reason: "") }
        #expect(device.act(at: noon + 1) { $0.spend(minute) } == minute)
        #expect(device.summary(at: noon + 2).timeUp)
    }

    @Test func spendingTakesTodayFirstThenEarnedAndNeverGoesBelowZero() {
        let device = solo()
        device.act(at: noon) { $0.earn(10 * minute, reason: "push-ups") }
        #expect(device.act(at: noon + 1) { $0.spend(25 * minute) } == 25 * minute)
        var s = device.summary(at: noon + 2)
        #expect(s.remainingMs == 15 * minute)
        #expect(s.earnedMs == 10 * minute, "nothing came out of earned yet")
        #expect(device.act(at: noon + 3) { $0.spend(20 * minute) } == 15 * minute, "spends only what there is")
        s = device.summary(at: noon + 4)
        #expect(s.remainingMs == 0)
        #expect(s.spentTodayMs == 40 * minute)
        #expect(s.timeUp)
        #expect(s.allowanceMs + s.extensionMs + s.earnedMs - s.spentTodayMs == s.remainingMs)
        // Tomorrow: a fresh allowance; the earned minutes were used up.
        s = device.summary(at: noon + day)
        #expect(s.remainingMs == 30 * minute)
        #expect(s.earnedMs == 0)
        #expect(!s.timeUp)
    }

    @Test func earnedMinutesCarryOverAndTheAllowanceDoesNot() {
        let device = solo()
        device.act(at: noon) { $0.earn(12 * minute, reason: "") }
        device.act(at: noon) { $0.spend(10 * minute) }
        let tomorrow = device.summary(at: noon + day)
        #expect(tomorrow.earnedMs == 12 * minute)
        #expect(tomorrow.remainingMs == 42 * minute)
    }

    @Test func extensionsExpireAtTheEndOfTheDayAndAreCapped() {
        let device = solo()
        #expect(device.act(at: noon) { $0.extend() } == .granted(extensionsToday: 1, max: 2, addedMs: 5 * minute))
        #expect(device.act(at: noon) { $0.extend() } == .granted(extensionsToday: 2, max: 2, addedMs: 5 * minute))
        #expect(device.act(at: noon) { $0.extend() } == .capReached(used: 2, max: 2))
        #expect(device.summary(at: noon).remainingMs == 40 * minute)
        device.act(at: noon) { $0.spend(3 * minute) }
        let tomorrow = device.summary(at: noon + day)
        #expect(tomorrow.remainingMs == 30 * minute, "an extension never leaks into the next day")
        #expect(tomorrow.extensionsToday == 0)
        #expect(device.act(at: noon + day) { $0.extend() } == .granted(extensionsToday: 1, max: 2, addedMs: 5 * minute))
    }

    @Test func timeUpFlipsOnSpendingToZeroAndBackOnEarnOrExtend() {
        let device = solo(base: 1)
        device.act(at: noon) { $0.spend(minute) }
        #expect(device.summary(at: noon).timeUp)
        device.act(at: noon + 1) { $0.earn(minute / 4, reason: "") }
        #expect(!device.summary(at: noon + 1).timeUp)
        device.act(at: noon + 2) { $0.spend(minute) }
        #expect(device.summary(at: noon + 2).timeUp)
        _ = device.act(at: noon + 3) { $0.extend() }
        #expect(!device.summary(at: noon + 3).timeUp)
    }

    @Test func theDayFollowsThePolicyTimeZoneAcrossA25HourDay() {
        let madrid = LocalCalendar(rule: POSIXTimeZoneRule(parsing: "CET-1CEST,M3.5.0,M10.5.0/3")!)
        let device = solo(zone: madrid)
        let longDay = CivilDate(year: 2026, month: 10, day: 25)!
        let start = madrid.start(of: longDay)
        _ = device.act(at: start + 1000) { $0.extend() }
        device.act(at: start + 1000) { $0.spend(10 * minute) }
        // 24 hours after the start it is still the same local day (23:00 after the clocks went back).
        let late = start + 24 * 3_600_000 + 30 * 60_000
        var s = device.summary(at: late)
        #expect(s.day == longDay)
        #expect(s.dayEndMillis - s.dayStartMillis == 25 * 3_600_000)
        #expect(s.remainingMs == 25 * minute)
        s = device.summary(at: start + 25 * 3_600_000)
        #expect(s.day == longDay.next)
        #expect(s.remainingMs == 30 * minute, "the extension expired with the local day")
    }

    @Test func aCutInTheDailyBaseNeverShrinksWhatWasAlreadyDrawnButARaiseCountsAtOnce() {
        let device = solo()
        device.act(at: noon) { $0.spend(20 * minute) }
        device.setPolicy(BalancePolicy.Key.dailyBase, .double(10), at: noon + 1)
        #expect(device.summary(at: noon + 2).remainingMs == 10 * minute)
        device.setPolicy(BalancePolicy.Key.dailyBase, .double(45), at: noon + 3)
        #expect(device.summary(at: noon + 4).remainingMs == 25 * minute)
        #expect(device.summary(at: noon + day).remainingMs == 45 * minute)
    }

    @Test func recordsWrittenByAnotherDeviceUnderMyNameAreIgnored() {
        let me = BalanceDevice(1), forger = BalanceDevice(2)
        me.act(at: noon) { $0.register() }
        // The forger writes earned records under my ID, in the legacy form and under my store epoch; neither may count.
        for key in ["earned.\(me.id)", "earned.\(me.account)"] {
            forger.store.set(.dictionary(["ms": .int(999 * minute)]), suite: BalanceSuite.name, key: key, physicalMillis: noon)
        }
        sync(me, forger, at: noon)
        #expect(me.summary(at: noon).earnedMs == 0)
    }

    @Test func quotaSlicesShareAnyAmountWithoutLosingAMinute() {
        var generator = SeededGenerator(seed: 3)
        for _ in 0..<200 {
            let amount = Int64.random(in: 0...90_000_000, using: &generator)
            var cuts = (0..<Int.random(in: 1...15, using: &generator)).map { _ in Int64.random(in: 0...QuotaSlices.total, using: &generator) }
            cuts = ([0, QuotaSlices.total] + cuts).sorted()
            let parts = zip(cuts, cuts.dropFirst()).map { QuotaSlices([$0..<$1]) }
            #expect(parts.reduce(0) { $0 + $1.share(of: amount) } == amount)
        }
        var set = QuotaSlices.whole
        set.subtract(100..<200)
        #expect(set.count == QuotaSlices.total - 100)
        set.formUnion(150..<300)
        #expect(set.ranges == [0..<100, 150..<QuotaSlices.total])
        #expect(set.top(10).ranges == [(QuotaSlices.total - 10)..<QuotaSlices.total])
    }
}
