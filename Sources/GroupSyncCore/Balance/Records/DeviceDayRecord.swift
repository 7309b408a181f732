/// What one device did with one local day: the allowance and extension slots it drew from its quota
/// slices, the extensions it granted, and what it spent. Written only by that device; every field only
/// grows, so the latest write is also the largest.
///
/// The record's existence freezes the device's draw for the day: a later policy change can raise
/// today's draw (more rights are always safe) but never lower it below what the device may already
/// have spent or handed on.
public struct DeviceDayRecord: Equatable, Sendable {
    public var allowanceMs: Int64 = 0
    public var slots: Int64 = 0
    public var extensions: Int64 = 0
    public var extensionMs: Int64 = 0
    public var spentMs: Int64 = 0
    public var lastSpendAt: Int64 = 0
    public var lastExtendAt: Int64 = 0

    public init() {}

    var value: Value {
        .dictionary([
            "allowanceMs": .int(allowanceMs), "slots": .int(slots), "extensions": .int(extensions),
            "extensionMs": .int(extensionMs), "spentMs": .int(spentMs),
            "lastSpendAt": .int(lastSpendAt), "lastExtendAt": .int(lastExtendAt),
        ])
    }

    init?(_ value: Value) {
        guard case .dictionary(let d) = value else { return nil }
        allowanceMs = d.count("allowanceMs")
        slots = d.count("slots")
        extensions = d.count("extensions")
        extensionMs = d.count("extensionMs")
        spentMs = d.count("spentMs")
        lastSpendAt = d.instant("lastSpendAt")
        lastExtendAt = d.instant("lastExtendAt")
    }
}

/// Minutes a device's user earned there (push-ups). They carry over from day to day.
public struct EarnedRecord: Equatable, Sendable {
    public var ms: Int64 = 0
    public var count: Int64 = 0
    public var lastAt: Int64 = 0
    public var lastReason: String = ""

    public init() {}

    var value: Value {
        .dictionary(["ms": .int(ms), "count": .int(count), "lastAt": .int(lastAt), "lastReason": .string(lastReason)])
    }

    init?(_ value: Value) {
        guard case .dictionary(let d) = value else { return nil }
        ms = d.count("ms")
        count = d.count("count")
        lastAt = d.instant("lastAt")
        lastReason = d["lastReason"]?.stringValue ?? ""
    }
}

/// Rights one device has handed another for one day, as running totals: day minutes and extension slots.
public struct DayTransfer: Equatable, Sendable {
    public var ms: Int64 = 0
    public var slots: Int64 = 0
    /// The extension cap in force when `slots` were handed on: slots count only under that cap, since every
    /// device's draw follows the cap in force (`BalanceLedger.slotDraw`). `nil` in records of a groupsync
    /// before this field, which count under any cap.
    public var slotsCap: Int64?

    public init(ms: Int64 = 0, slots: Int64 = 0, slotsCap: Int64? = nil) {
        self.ms = ms
        self.slots = slots
        self.slotsCap = slotsCap
    }

    var value: Value {
        var fields: [String: Value] = ["ms": .int(ms), "slots": .int(slots)]
        if let slotsCap { fields["slotsCap"] = .int(slotsCap) }
        return .dictionary(fields)
    }

    init?(_ value: Value) {
        guard case .dictionary(let d) = value else { return nil }
        ms = d.count("ms")
        slots = d.count("slots")
        slotsCap = d["slotsCap"]?.intValue
    }

    /// The slots that count under the cap `maxExtensions`.
    func slots(under maxExtensions: Int64) -> Int64 {
        slotsCap == nil || slotsCap == maxExtensions ? slots : 0
    }
}

/// A device asking its connected peers for rights: "I want to hold at least `holdMs` minutes and
/// `slots` extension slots today". It is void as soon as the device spends or extends again (its
/// spent or extension count no longer matches the base it asked from), so a request is answered for
/// one attempt only and cannot keep draining the peers.
public struct RightsRequest: Equatable, Sendable {
    public var day: CivilDate
    public var holdMs: Int64
    public var slots: Int64
    public var spentBase: Int64
    public var extensionsBase: Int64
    public var at: Int64

    public init(day: CivilDate, holdMs: Int64, slots: Int64, spentBase: Int64, extensionsBase: Int64, at: Int64) {
        self.day = day
        self.holdMs = holdMs
        self.slots = slots
        self.spentBase = spentBase
        self.extensionsBase = extensionsBase
        self.at = at
    }

    var value: Value {
        .dictionary([
            "day": .string(day.description), "holdMs": .int(holdMs), "slots": .int(slots),
            "spentBase": .int(spentBase), "extensionsBase": .int(extensionsBase), "at": .int(at),
        ])
    }

    init?(_ value: Value) {
        guard case .dictionary(let d) = value, let text = d["day"]?.stringValue, let day = CivilDate(parsing: text) else { return nil }
        self.init(day: day, holdMs: d.count("holdMs"), slots: d.count("slots"), spentBase: d.count("spentBase"),
                  extensionsBase: d.count("extensionsBase"), at: d.instant("at"))
    }
}

/// Usage of one monitor that one device paid for out of its rights. Only the paying device writes it;
/// unlike the other records its amount may go *down*, when the device learns that the usage was less (a
/// burst turned out to be a phantom) or that another device paid for the same usage first.
///
/// Usage is paid from the rights of the local day it happened on (the day of its thresholds' `at`), never
/// from the day the monitor was armed: a day's allowance expires at its end. A monitor whose usage runs
/// past midnight keeps what it paid on the earlier day in `earlier` and files the rest under `day`; `ms`
/// stays the total, so a reader that knows only `day` and `ms` counts the whole of it on `day`, which
/// never shows more minutes than there are.
public struct UsageCharge: Equatable, Sendable {
    public var activity: String
    public var armedAt: Int64
    /// The latest day this charge paid on.
    public var day: CivilDate
    /// Everything charged, `earlier` included.
    public var ms: Int64
    public var at: Int64
    /// What was paid on days before `day`, frozen when the usage moved on to a later day.
    public var earlier: [CivilDate: Int64]

    public init(activity: String, armedAt: Int64, day: CivilDate, ms: Int64, at: Int64, earlier: [CivilDate: Int64] = [:]) {
        self.activity = activity
        self.armedAt = armedAt
        self.day = day
        self.ms = ms
        self.at = at
        self.earlier = earlier
    }

    /// What the charge pays on `day`.
    public func ms(on date: CivilDate) -> Int64 {
        if date == day { return max(0, ms.saturatingSubtracting(earlierMs)) }
        return date < day ? earlier[date] ?? 0 : 0
    }

    /// The days the charge pays anything on.
    public var days: [CivilDate] { ([day] + earlier.keys.filter { $0 < day }).filter { ms(on: $0) > 0 } }

    var earlierMs: Int64 { earlier.filter { $0.key < day }.saturatingSum(\.value) }

    var value: Value {
        var fields: [String: Value] = [
            "activity": .string(activity), "armedAt": .int(armedAt), "day": .string(day.description),
            "ms": .int(ms), "at": .int(at),
        ]
        if !earlier.isEmpty {
            fields["earlierDays"] = .dictionary(Dictionary(uniqueKeysWithValues: earlier.map { ($0.key.description, .int($0.value)) }))
        }
        return .dictionary(fields)
    }

    init?(_ value: Value) {
        guard case .dictionary(let d) = value, let activity = d["activity"]?.stringValue, let armedAt = d.exactInstant("armedAt"),
              let text = d["day"]?.stringValue, let day = CivilDate(parsing: text) else { return nil }
        var earlier: [CivilDate: Int64] = [:]
        if case .dictionary(let parts)? = d["earlierDays"] {
            for (key, _) in parts { if let date = CivilDate(parsing: key), date < day { earlier[date] = parts.count(key) } }
        }
        self.init(activity: activity, armedAt: armedAt, day: day, ms: d.count("ms"), at: d.instant("at"), earlier: earlier)
    }
}
