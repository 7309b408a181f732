/// When each callback of an App Group last fired, read from its `events_…` keys (epoch ms).
public struct FiredEventHistory: Sendable {
    /// Last fired time by key (`events_{activity}_{callback}[_{event}]`).
    public var lastFired: [String: Double]

    public init(lastFired: [String: Double] = [:]) { self.lastFired = lastFired }

    /// Reads every `events_…` key of a suite whose value is a number (ms) or a date.
    public init(values: [String: Value]) {
        var fired: [String: Double] = [:]
        for (key, value) in values where EntryName.starts(key, with: LatestFiring.keyPrefix) {
            if let ms = value.epochMillis { fired[key] = ms }
        }
        self.init(lastFired: fired)
    }

    public func lastFired(_ invocation: CallbackInvocation) -> Double? { lastFired[invocation.eventsKey] }

    /// Whether an event of the same activity and callback that is *larger* than `event` fired after `after`.
    public func largerEventFired(than invocation: CallbackInvocation, after: Double) -> Bool {
        guard let event = invocation.event else { return false }
        let prefix = "events_\(invocation.activity)_\(invocation.callback.rawValue)_"
        return lastFired.contains { key, at in
            guard at > after, let larger = EntryName.remainder(of: key, after: prefix) else { return false }
            return EventOrder.isLarger(larger, than: event)
        }
    }
}

/// How event names compare: by their minutes when both read as numbers (`used-7` > `used-6.5`),
/// otherwise as text.
public enum EventOrder {
    public static func number(_ name: String) -> Double? {
        let digits = name.hasPrefix(UsageThresholdName.prefix) ? String(name.dropFirst(UsageThresholdName.prefix.count)) : name
        guard let n = Double(digits), n.isFinite else { return nil }
        return n
    }

    public static func isLarger(_ name: String, than other: String) -> Bool {
        if let a = number(name), let b = number(other) { return a > b }
        return name > other
    }
}

extension Value {
    /// A time as the App Group stores it: epoch ms as a number, or a date; nil for anything else, and for
    /// a time beyond ±10¹⁵ ms (about 31,000 years), which no real time or window is and which would
    /// overflow the whole numbers the guards print.
    var epochMillis: Double? {
        let ms: Double? = switch self {
        case .double(let d): d
        case .int(let i): Double(i)
        case .date(let seconds): seconds * 1000
        default: nil
        }
        guard let ms, ms.isFinite, abs(ms) <= 1e15 else { return nil }
        return ms
    }
}
