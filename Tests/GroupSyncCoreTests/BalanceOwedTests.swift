import Testing
@testable import GroupSyncCore

/// Usage past the balance is owed in plain sight (`BalanceSummary.owedMs`), and only what will be paid: today's
/// by the next rights that come, an earlier day's by earned minutes alone.
@Suite struct BalanceOwedTests {
    let day: Int64 = 86_400_000

    func device() -> BalanceDevice {
        let device = BalanceDevice(1)
        device.setPolicy(BalancePolicy.Key.dailyBase, .double(10), at: noon - day)
        device.act(at: noon - day) { $0.register() }
        return device
    }

    /// 25 minutes of genuine usage of one monitor armed at `armedAt`, one threshold a minute.
    func use(_ device: BalanceDevice, armedAt: Int64) {
        let monitor = MonitorID(activity: "scroll", armedAt: armedAt)
        for used in 1...25 {
            let at = armedAt + Int64(used) * minute + 1_000
            device.act(at: at) { _ = $0.recordUsage(monitor: monitor, threshold: try! UsageThresholdName(parsing: "used-\(used)"), at: at) }
        }
    }

    @Test func todaysOverrunIsOwedAndTakenOffWhatRemains() {
        let a = device()
        use(a, armedAt: noon)
        let summary = a.summary(at: noon + 30 * minute)
        #expect(summary.owedMs == 15 * minute && summary.remainingMs == 0 && summary.timeUp)
        a.act(at: noon + 31 * minute) { $0.earn(20 * minute, reason: "push-ups") }
        #expect(a.summary(at: noon + 31 * minute).remainingMs == 5 * minute, "the earning pays the 15 owed first")
        a.act(at: noon + 32 * minute) { $0.settleUsage() }
        let settled = a.summary(at: noon + 32 * minute)
        #expect(settled.owedMs == 0 && settled.remainingMs == 5 * minute, "paid: the same 5 remain")
    }

    /// Found by review: yesterday's overrun was taken off every following day for two weeks, though no later
    /// allowance ever pays it; the next day began in "time's up".
    @Test func anEarlierDaysOverrunIsOwedOnlyAsFarAsEarnedMinutesPayIt() {
        let a = device()
        use(a, armedAt: noon - day)
        let nextDay = a.summary(at: noon)
        #expect(nextDay.owedMs == 0 && nextDay.remainingMs == 10 * minute && !nextDay.timeUp, "\(nextDay)")
        a.act(at: noon + 1) { $0.earn(20 * minute, reason: "push-ups") }
        let earned = a.summary(at: noon + 2)
        #expect(earned.owedMs == 15 * minute && earned.remainingMs == 15 * minute, "earned minutes pay yesterday's: \(earned)")
        a.act(at: noon + 3) { $0.settleUsage() }
        let settled = a.summary(at: noon + 4)
        #expect(settled.owedMs == 0 && settled.remainingMs == 15 * minute, "\(settled)")
    }

    /// Usage from before the device joined is paid from its first day's rights (`payDay`), so it is owed today.
    @Test func usageFromBeforeJoiningIsOwedToday() {
        let a = BalanceDevice(1)
        a.setPolicy(BalancePolicy.Key.dailyBase, .double(10), at: noon)
        a.act(at: noon) { $0.register() }
        let monitor = MonitorID(activity: "scroll", armedAt: noon - 20 * minute - 12 * 60 * minute)
        let firedYesterday = monitor.armedAt + 15 * minute + 1_000
        a.act(at: noon + 1) { _ = $0.recordUsage(monitor: monitor, threshold: try! UsageThresholdName(parsing: "used-15"), at: firedYesterday) }
        let summary = a.summary(at: noon + 2)
        #expect(summary.owedMs == 5 * minute && summary.remainingMs == 0, "\(summary)")
    }

    /// A store moved aside never settles its charges again: what it owed is not taken off anyone's minutes.
    @Test func whatAStoreMovedAsideOwedIsNotTakenOff() {
        let a = device()
        use(a, armedAt: noon)
        #expect(a.summary(at: noon + 30 * minute).owedMs == 15 * minute)
        let moved = a.store.entries
        a.moveStoreAside(newStoreID: "store-1b", group: [a])
        _ = a.store.apply(moved, physicalMillis: noon + 31 * minute)
        a.act(at: noon + 32 * minute) { $0.register() }
        let summary = a.summary(at: noon + 33 * minute)
        #expect(summary.owedMs == 0, "\(summary)")
    }
}
