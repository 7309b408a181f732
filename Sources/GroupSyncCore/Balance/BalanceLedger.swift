/// Everything the balance suite holds, as one device currently sees it, read into typed records.
///
/// The ledger is a pure value: built from the suite's entries, changed by the balance operations,
/// and turned back into the entries to write (`writes`). Keys it does not recognise, and records that
/// do not parse, are ignored, so a newer or damaged device cannot make this one crash or overspend.
public struct BalanceLedger: Sendable {
    public var policy: BalancePolicy
    public var members: [DeviceID: Membership] = [:]
    /// Quota gifts, by giver.
    public var gifts: [DeviceID: [QuotaGift]] = [:]
    public var days: [DeviceID: [CivilDate: DeviceDayRecord]] = [:]
    public var earned: [DeviceID: EarnedRecord] = [:]
    /// Day rights handed over: `dayTransfers[from][to][day]`.
    public var dayTransfers: [DeviceID: [DeviceID: [CivilDate: DayTransfer]]] = [:]
    /// Earned rights handed over: `earnedTransfers[from][to]`, a running total in ms.
    public var earnedTransfers: [DeviceID: [DeviceID: Int64]] = [:]
    public var requests: [DeviceID: RightsRequest] = [:]
    public var charges: [DeviceID: [MonitorID: UsageCharge]] = [:]
    public var fired: [MonitorID: [String: FiredThreshold]] = [:]

    /// Keys changed since the ledger was read, with their new values.
    public private(set) var writes: [String: Value] = [:]

    public init(policy: BalancePolicy = .standard) { self.policy = policy }

    /// Reads the live entries of the balance suite.
    public init(entries: [Entry]) {
        var policyValues: [String: Value] = [:]
        self.init()
        for entry in entries where entry.suite == BalanceSuite.name {
            guard let value = entry.value else { continue }
            let key = entry.key
            if key.hasPrefix("policy.") { policyValues[key] = value; continue }
            if key.hasPrefix("fired.") {
                if let event = FiredThreshold(value), event.key == key { fired[event.monitor, default: [:]][event.event] = event }
                continue
            }
            let parts = key.split(separator: ".", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
            guard parts.count >= 2, let device = try? DeviceID(parsing: parts[1]), parts[1] == device.description else { continue }
            // Single-writer keys are honoured only when their writer is the device they name.
            guard entry.version.origin == device else { continue }
            switch (parts[0], parts.count) {
            case ("member", 2): members[device] = Membership(value)
            case ("quota", 2):
                if case .array(let items) = value { gifts[device] = items.compactMap(QuotaGift.init) }
            case ("day", 3):
                if let day = CivilDate(parsing: parts[2]), let record = DeviceDayRecord(value) { days[device, default: [:]][day] = record }
            case ("earned", 2): earned[device] = EarnedRecord(value)
            case ("want", 2): requests[device] = RightsRequest(value)
            case ("give", 4):
                guard let to = try? DeviceID(parsing: parts[2]), to != device else { continue }
                if parts[3] == "earned" {
                    if case .dictionary(let d) = value { earnedTransfers[device, default: [:]][to] = d.count("ms") }
                } else if let day = CivilDate(parsing: parts[3]), let transfer = DayTransfer(value) {
                    dayTransfers[device, default: [:]][to, default: [:]][day] = transfer
                }
            case ("charge", 3), ("charge", 4):
                if let charge = UsageCharge(value), key == Self.chargeKey(device, MonitorID(activity: charge.activity, armedAt: charge.armedAt)) {
                    charges[device, default: [:]][MonitorID(activity: charge.activity, armedAt: charge.armedAt)] = charge
                }
            default: continue
            }
        }
        policy = BalancePolicy(values: policyValues)
    }

    // MARK: Keys

    static func memberKey(_ d: DeviceID) -> String { "member.\(d)" }
    static func quotaKey(_ d: DeviceID) -> String { "quota.\(d)" }
    static func dayKey(_ d: DeviceID, _ day: CivilDate) -> String { "day.\(d).\(day)" }
    static func earnedKey(_ d: DeviceID) -> String { "earned.\(d)" }
    static func wantKey(_ d: DeviceID) -> String { "want.\(d)" }
    static func dayTransferKey(_ from: DeviceID, _ to: DeviceID, _ day: CivilDate) -> String { "give.\(from).\(to).\(day)" }
    static func earnedTransferKey(_ from: DeviceID, _ to: DeviceID) -> String { "give.\(from).\(to).earned" }
    static func chargeKey(_ d: DeviceID, _ monitor: MonitorID) -> String { "charge.\(d).\(monitor.armedAt).\(monitor.activity)" }

    // MARK: Changes (each marks its key for writing)

    mutating func setMembership(_ m: Membership, of device: DeviceID) {
        members[device] = m
        writes[Self.memberKey(device)] = m.value
    }

    mutating func addGifts(_ new: [QuotaGift], by device: DeviceID) {
        gifts[device, default: []] += new
        writes[Self.quotaKey(device)] = .array(gifts[device]!.map(\.value))
    }

    mutating func setDayRecord(_ record: DeviceDayRecord, of device: DeviceID, day: CivilDate) {
        days[device, default: [:]][day] = record
        writes[Self.dayKey(device, day)] = record.value
    }

    mutating func setEarned(_ record: EarnedRecord, of device: DeviceID) {
        earned[device] = record
        writes[Self.earnedKey(device)] = record.value
    }

    mutating func setRequest(_ request: RightsRequest, of device: DeviceID) {
        requests[device] = request
        writes[Self.wantKey(device)] = request.value
    }

    mutating func setDayTransfer(_ transfer: DayTransfer, from: DeviceID, to: DeviceID, day: CivilDate) {
        dayTransfers[from, default: [:]][to, default: [:]][day] = transfer
        writes[Self.dayTransferKey(from, to, day)] = transfer.value
    }

    mutating func setEarnedTransfer(_ ms: Int64, from: DeviceID, to: DeviceID) {
        earnedTransfers[from, default: [:]][to] = ms
        writes[Self.earnedTransferKey(from, to)] = .dictionary(["ms": .int(ms)])
    }

    mutating func setCharge(_ charge: UsageCharge, of device: DeviceID) {
        let monitor = MonitorID(activity: charge.activity, armedAt: charge.armedAt)
        charges[device, default: [:]][monitor] = charge
        writes[Self.chargeKey(device, monitor)] = charge.value
    }

    mutating func recordFired(_ event: FiredThreshold) {
        fired[event.monitor, default: [:]][event.event] = event
        writes[event.key] = event.value
    }

    /// Forgets the pending writes (after the caller stored them).
    public mutating func clearWrites() { writes = [:] }
}
