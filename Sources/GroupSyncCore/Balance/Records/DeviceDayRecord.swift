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

    public init(ms: Int64 = 0, slots: Int64 = 0) {
        self.ms = ms
        self.slots = slots
    }

    var value: Value { .dictionary(["ms": .int(ms), "slots": .int(slots)]) }

    init?(_ value: Value) {
        guard case .dictionary(let d) = value else { return nil }
        ms = d.count("ms")
        slots = d.count("slots")
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

/// Usage of one monitor that one device paid for out of its rights, filed under the monitor's day.
/// Only the paying device writes it; unlike the other records its amount may go *down*, when the
/// device learns that the usage was less (a burst turned out to be a phantom) or that another device
/// paid for the same usage first.
public struct UsageCharge: Equatable, Sendable {
    public var activity: String
    public var armedAt: Int64
    public var day: CivilDate
    public var ms: Int64
    public var at: Int64

    public init(activity: String, armedAt: Int64, day: CivilDate, ms: Int64, at: Int64) {
        self.activity = activity
        self.armedAt = armedAt
        self.day = day
        self.ms = ms
        self.at = at
    }

    var value: Value {
        .dictionary([
            "activity": .string(activity), "armedAt": .int(armedAt), "day": .string(day.description),
            "ms": .int(ms), "at": .int(at),
        ])
    }

    init?(_ value: Value) {
        guard case .dictionary(let d) = value, let activity = d["activity"]?.stringValue, let armedAt = d.exactInstant("armedAt"),
              let text = d["day"]?.stringValue, let day = CivilDate(parsing: text) else { return nil }
        self.init(activity: activity, armedAt: armedAt, day: day, ms: d.count("ms"), at: d.instant("at"))
    }
}
