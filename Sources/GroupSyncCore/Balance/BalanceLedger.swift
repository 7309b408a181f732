/// Everything the balance suite holds, as one device currently sees it, read into typed records.
///
/// The ledger is a pure value: built from the suite's entries, changed by the balance operations,
/// and turned back into the entries to write (`writes`). Keys it does not recognise, and records that
/// do not parse, are ignored, so a newer or damaged device cannot make this one crash or overspend.
public struct BalanceLedger: Sendable {
    public var policy: BalancePolicy
    /// Every record below is keyed by the account (device and store epoch) that wrote it; see `BalanceAccount`.
    public var members: [BalanceAccount: Membership] = [:]
    /// Quota gifts, by giver.
    public var gifts: [BalanceAccount: [QuotaGift]] = [:]
    public var days: [BalanceAccount: [CivilDate: DeviceDayRecord]] = [:]
    public var earned: [BalanceAccount: EarnedRecord] = [:]
    /// Day rights handed over: `dayTransfers[from][to][day]`.
    public var dayTransfers: [BalanceAccount: [BalanceAccount: [CivilDate: DayTransfer]]] = [:]
    /// Earned rights handed over: `earnedTransfers[from][to]`, a running total in ms.
    public var earnedTransfers: [BalanceAccount: [BalanceAccount: Int64]] = [:]
    public var requests: [BalanceAccount: RightsRequest] = [:]
    public var charges: [BalanceAccount: [MonitorID: UsageCharge]] = [:]
    public var fired: [MonitorID: [String: FiredThreshold]] = [:]

    /// Keys changed since the ledger was read, with their new values.
    public private(set) var writes: [String: Value] = [:]

    public init(policy: BalancePolicy = .standard) { self.policy = policy }

    /// Reads the live entries of the balance suite.
    public init(entries: [Entry]) {
        var policyValues: [String: Value] = [:]
        self.init()
        // A handful of accounts name every record, and a year of use makes thousands of records: each account's
        // text is parsed once (parsing a device ID checks and formats it again), not once per key. Found by a
        // review of a simulated year, where parsing was half of every balance command's time.
        var accounts: [Substring: BalanceAccount?] = [:]
        func parsedAccount(_ text: Substring) -> BalanceAccount? {
            if let known = accounts[text] { return known }
            let parsed = BalanceAccount(parsing: String(text))
            accounts[text] = parsed
            return parsed
        }
        for entry in entries where entry.suite == BalanceSuite.name {
            guard let value = entry.value else { continue }
            let key = entry.key
            if EntryName.starts(key, with: "policy.") { policyValues[key] = value; continue }
            if EntryName.starts(key, with: "fired.") {
                if let event = FiredThreshold(value), event.key == key { fired[event.monitor, default: [:]][event.event] = event }
                continue
            }
            // Split as bytes, as the store tells names apart (`EntryName.starts`), and because splitting into
            // characters cost as much as the rest of the read together.
            let parts = key.utf8.split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false).map(Substring.init)
            guard parts.count >= 2, let account = parsedAccount(parts[1]) else { continue }
            // Single-writer keys are honoured only when their writer is the device their account names.
            guard entry.version.origin == account.device else { continue }
            switch (parts[0], parts.count) {
            case ("member", 2): members[account] = Membership(value)
            case ("quota", 2):
                if case .array(let items) = value { gifts[account] = items.compactMap(QuotaGift.init) }
            case ("day", 3):
                if let day = CivilDate(parsing: parts[2]), let record = DeviceDayRecord(value) { days[account, default: [:]][day] = record }
            case ("earned", 2): earned[account] = EarnedRecord(value)
            case ("want", 2): requests[account] = RightsRequest(value)
            case ("give", 4):
                guard let to = parsedAccount(parts[2]), to != account else { continue }
                if parts[3] == "earned" {
                    if case .dictionary(let d) = value { earnedTransfers[account, default: [:]][to] = d.count("ms") }
                } else if let day = CivilDate(parsing: parts[3]), let transfer = DayTransfer(value) {
                    dayTransfers[account, default: [:]][to, default: [:]][day] = transfer
                }
            case ("charge", 3), ("charge", 4):
                // The account's text is its canonical form (parsing refuses any other), so the key is built from it
                // rather than by formatting the device ID again.
                guard let charge = UsageCharge(value) else { continue }
                let monitor = MonitorID(activity: charge.activity, armedAt: charge.armedAt)
                if key == Self.chargeKey(accountText: parts[1], monitor) { charges[account, default: [:]][monitor] = charge }
            default: continue
            }
        }
        policy = BalancePolicy(values: policyValues)
    }

    // MARK: Keys

    static func memberKey(_ d: BalanceAccount) -> String { "member.\(d)" }
    static func quotaKey(_ d: BalanceAccount) -> String { "quota.\(d)" }
    static func dayKey(_ d: BalanceAccount, _ day: CivilDate) -> String { "day.\(d).\(day)" }
    static func earnedKey(_ d: BalanceAccount) -> String { "earned.\(d)" }
    static func wantKey(_ d: BalanceAccount) -> String { "want.\(d)" }
    static func dayTransferKey(_ from: BalanceAccount, _ to: BalanceAccount, _ day: CivilDate) -> String { "give.\(from).\(to).\(day)" }
    static func earnedTransferKey(_ from: BalanceAccount, _ to: BalanceAccount) -> String { "give.\(from).\(to).earned" }
    static func chargeKey(_ d: BalanceAccount, _ monitor: MonitorID) -> String { chargeKey(accountText: d.description, monitor) }
    static func chargeKey(accountText: some StringProtocol, _ monitor: MonitorID) -> String { "charge.\(accountText).\(monitor.armedAt).\(monitor.activity)" }

    // MARK: Changes (each marks its key for writing)

    mutating func setMembership(_ m: Membership, of account: BalanceAccount) {
        members[account] = m
        writes[Self.memberKey(account)] = m.value
    }

    mutating func addGifts(_ new: [QuotaGift], by account: BalanceAccount) {
        gifts[account, default: []] += new
        writes[Self.quotaKey(account)] = .array(gifts[account]!.map(\.value))
    }

    /// Sets the daily base, keeping the base it replaces for the days before `day` (`DailyBaseChange`).
    mutating func setDailyBase(minutes: Double, changedOn day: CivilDate) {
        guard let ms = BalanceAmount.millis(minutes: minutes, in: BalancePolicy.minutesRange) else { return }
        writes[BalancePolicy.Key.dailyBase] = .double(minutes)
        guard ms != policy.dailyBaseMs else { return }
        policy.dailyBaseChanges = Array((policy.dailyBaseChanges + [DailyBaseChange(day: day, beforeMs: policy.dailyBaseMs)]).suffix(DailyBaseChange.kept))
        policy.dailyBaseMs = ms
        writes[BalancePolicy.Key.dailyBaseChanges] = .array(policy.dailyBaseChanges.map(\.value))
    }

    mutating func setDayRecord(_ record: DeviceDayRecord, of account: BalanceAccount, day: CivilDate) {
        days[account, default: [:]][day] = record
        writes[Self.dayKey(account, day)] = record.value
    }

    mutating func setEarned(_ record: EarnedRecord, of account: BalanceAccount) {
        earned[account] = record
        writes[Self.earnedKey(account)] = record.value
    }

    mutating func setRequest(_ request: RightsRequest, of account: BalanceAccount) {
        requests[account] = request
        writes[Self.wantKey(account)] = request.value
    }

    mutating func setDayTransfer(_ transfer: DayTransfer, from: BalanceAccount, to: BalanceAccount, day: CivilDate) {
        dayTransfers[from, default: [:]][to, default: [:]][day] = transfer
        writes[Self.dayTransferKey(from, to, day)] = transfer.value
    }

    mutating func setEarnedTransfer(_ ms: Int64, from: BalanceAccount, to: BalanceAccount) {
        earnedTransfers[from, default: [:]][to] = ms
        writes[Self.earnedTransferKey(from, to)] = .dictionary(["ms": .int(ms)])
    }

    mutating func setCharge(_ charge: UsageCharge, of account: BalanceAccount) {
        let monitor = MonitorID(activity: charge.activity, armedAt: charge.armedAt)
        charges[account, default: [:]][monitor] = charge
        writes[Self.chargeKey(account, monitor)] = charge.value
    }

    mutating func recordFired(_ event: FiredThreshold) {
        fired[event.monitor, default: [:]][event.event] = event
        writes[event.key] = event.value
    }

}
