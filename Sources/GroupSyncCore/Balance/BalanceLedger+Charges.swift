/// Usage charges as the ledger holds them: which monitors are still being settled, which stores settle each,
/// and what no charge has paid yet. The agent (`BalanceBook.settleCharge`, `coverDebts`) and the summary
/// (`owedMs`) ask the same questions, so they are answered once, here.
extension BalanceLedger {
    /// Monitors with a charge filed on a day of the settling window that ends `today`
    /// (`BalanceBook.settlingWindowDays`).
    func settlingMonitors(today: CivilDate) -> Set<MonitorID> {
        let oldest = CivilDate(ordinal: today.ordinal - BalanceBook.settlingWindowDays)
        var monitors = Set<MonitorID>()
        for byMonitor in charges.values { for (monitor, charge) in byMonitor where charge.day >= oldest { monitors.insert(monitor) } }
        return monitors
    }

    /// The stores that keep a charge for `monitor` and will settle it: a store moved aside never settles again.
    func payers(of monitor: MonitorID) -> [BalanceAccount] {
        charges.compactMap { account, byMonitor in byMonitor[monitor] != nil && !isRetired(account) ? account : nil }
    }

    func usageVerdict(_ monitor: MonitorID) -> UsageVerdict {
        UsageVerdict(events: Array((fired[monitor] ?? [:]).values), armedAt: monitor.armedAt)
    }

    /// Genuine usage of `monitor` that no charge has paid (what stores moved aside paid counts).
    func unpaidMs(_ monitor: MonitorID) -> Int64 {
        max(0, usageVerdict(monitor).usedMs.saturatingSubtracting(charges.values.saturatingSum { $0[monitor]?.ms ?? 0 }))
    }
}
