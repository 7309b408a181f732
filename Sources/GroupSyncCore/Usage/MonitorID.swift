/// One armed monitor: an activity name and the instant it was armed (epoch ms).
///
/// The seed re-arms a fresh monitor on the remaining balance each time the app goes to the background,
/// and a re-used name can keep an old threshold; the arming instant tells those sessions apart.
public struct MonitorID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var activity: String
    public var armedAt: Int64

    public init(activity: String, armedAt: Int64) {
        self.activity = activity
        self.armedAt = armedAt
    }

    public static func < (lhs: MonitorID, rhs: MonitorID) -> Bool { (lhs.armedAt, lhs.activity) < (rhs.armedAt, rhs.activity) }

    public var description: String { "\(activity)@\(armedAt)" }
}

/// A threshold event as the monitor delivered it: `used-N` of a monitor fired at `at` (epoch ms).
/// Stored once per monitor and event name, so the same event reported twice, or by two devices,
/// is one record.
public struct FiredThreshold: Equatable, Sendable {
    public var monitor: MonitorID
    public var event: String
    public var usedMs: Int64
    public var at: Int64

    public init(monitor: MonitorID, event: String, usedMs: Int64, at: Int64) {
        self.monitor = monitor
        self.event = event
        self.usedMs = usedMs
        self.at = at
    }

    /// Unique per (monitor, event): the activity's length makes the split unambiguous even when names hold dots.
    public var key: String { "fired.\(monitor.armedAt).\(monitor.activity.utf8.count).\(monitor.activity).\(event)" }

    var value: Value {
        .dictionary([
            "activity": .string(monitor.activity), "armedAt": .int(monitor.armedAt), "event": .string(event),
            "usedMs": .int(usedMs), "at": .int(at),
        ])
    }

    init?(_ value: Value) {
        // Any reporter writes these and every device reads them: a threshold no `used-N` name can carry, or
        // an instant out of range, is ignored rather than let into the guards' arithmetic.
        guard case .dictionary(let d) = value, let activity = d["activity"]?.stringValue, let armedAt = d.exactInstant("armedAt"),
              let event = d["event"]?.stringValue, let usedMs = d["usedMs"]?.intValue, UsageThresholdName.usedMsRange.contains(usedMs),
              d["at"]?.intValue != nil else { return nil }
        self.init(monitor: MonitorID(activity: activity, armedAt: armedAt), event: event, usedMs: usedMs, at: d.instant("at"))
    }
}
