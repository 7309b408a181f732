/// The conditions an action may carry, all times in epoch ms, checked before it runs.
///
/// They are checked against the history as it was *before* this firing is recorded, as the monitor
/// extension does: otherwise `skipIfAlreadyTriggeredWithinMS` would always see the current firing.
/// `neverTriggerBefore` is the seed's defence against `stopMonitoring` firing `intervalDidEnd` early
/// (section 7): end and start actions carry the real boundary minus a minute.
public struct ActionGuards: Equatable, Sendable {
    public var neverTriggerBefore: Double?
    public var skipIfAlreadyTriggeredAfter: Double?
    public var skipIfAlreadyTriggeredBefore: Double?
    public var skipIfAlreadyTriggeredWithinMS: Double?
    public var skipIfAlreadyTriggeredBetweenFromDate: Double?
    public var skipIfAlreadyTriggeredBetweenToDate: Double?
    public var skipIfLargerEventRecordedAfter: Double?
    public var skipIfLargerEventRecordedWithinMS: Double?
    public var skipIfLargerEventRecordedSinceIntervalStarted: Bool

    public init(action: [String: Value]) {
        neverTriggerBefore = action["neverTriggerBefore"]?.epochMillis
        skipIfAlreadyTriggeredAfter = action["skipIfAlreadyTriggeredAfter"]?.epochMillis
        skipIfAlreadyTriggeredBefore = action["skipIfAlreadyTriggeredBefore"]?.epochMillis
        skipIfAlreadyTriggeredWithinMS = action["skipIfAlreadyTriggeredWithinMS"]?.epochMillis
        skipIfAlreadyTriggeredBetweenFromDate = action["skipIfAlreadyTriggeredBetweenFromDate"]?.epochMillis
        skipIfAlreadyTriggeredBetweenToDate = action["skipIfAlreadyTriggeredBetweenToDate"]?.epochMillis
        skipIfLargerEventRecordedAfter = action["skipIfLargerEventRecordedAfter"]?.epochMillis
        skipIfLargerEventRecordedWithinMS = action["skipIfLargerEventRecordedWithinMS"]?.epochMillis
        skipIfLargerEventRecordedSinceIntervalStarted = action["skipIfLargerEventRecordedSinceIntervalStarted"] == .bool(true)
    }

    /// Why the action must not run now, or `nil` if it may.
    public func skipReason(for invocation: CallbackInvocation, now: Double, history: FiredEventHistory) -> String? {
        if let t = neverTriggerBefore, now < t {
            return "neverTriggerBefore: it may not run until \(Self.format(t)), \(Self.duration(t - now)) from now"
        }
        let last = history.lastFired(invocation)
        if let t = skipIfAlreadyTriggeredAfter, let last, last > t {
            return "skipIfAlreadyTriggeredAfter: it last fired at \(Self.format(last)), after \(Self.format(t))"
        }
        if skipIfAlreadyTriggeredBetweenFromDate != nil || skipIfAlreadyTriggeredBetweenToDate != nil, let last {
            let from = skipIfAlreadyTriggeredBetweenFromDate ?? -.infinity
            let to = skipIfAlreadyTriggeredBetweenToDate ?? .infinity
            if last >= from && last <= to { return "skipIfAlreadyTriggeredBetween: it last fired at \(Self.format(last)), inside the window" }
        }
        if let t = skipIfAlreadyTriggeredBefore, let last, last < t {
            return "skipIfAlreadyTriggeredBefore: it last fired at \(Self.format(last)), before \(Self.format(t))"
        }
        if let t = skipIfLargerEventRecordedAfter, history.largerEventFired(than: invocation, after: t) {
            return "skipIfLargerEventRecordedAfter: a larger event fired after \(Self.format(t))"
        }
        if let window = skipIfAlreadyTriggeredWithinMS, let last, last > now - window {
            // A firing stamped after this run's time (`fire --at` in the past, a clock set back) is within the
            // window too; "-60 min ago" said it badly (found by review).
            guard last <= now else {
                return "skipIfAlreadyTriggeredWithinMS: it last fired at \(Self.format(last)), later than this run's time \(Self.format(now))"
            }
            return "skipIfAlreadyTriggeredWithinMS: it last fired \(Self.duration(now - last)) ago, within \(Self.duration(window))"
        }
        if let window = skipIfLargerEventRecordedWithinMS, history.largerEventFired(than: invocation, after: now - window) {
            return "skipIfLargerEventRecordedWithinMS: a larger event fired within the last \(Self.duration(window))"
        }
        if skipIfLargerEventRecordedSinceIntervalStarted,
           let started = history.lastFired(CallbackInvocation(activity: invocation.activity, callback: .intervalDidStart, event: nil)),
           history.largerEventFired(than: invocation, after: started) {
            return "skipIfLargerEventRecordedSinceIntervalStarted: a larger event fired since the interval started at \(Self.format(started))"
        }
        return nil
    }

    static func format(_ ms: Double) -> String { ISO8601.format(secondsSince1970: (ms / 1000).rounded(.down)) }

    static func duration(_ ms: Double) -> String {
        let seconds = ms / 1000
        if abs(seconds) < 120 { return "\(Int(seconds.rounded())) s" }
        if abs(seconds) < 7200 { return "\(Int((seconds / 60).rounded())) min" }
        return "\(Int((seconds / 3600).rounded())) h"  // times are bounded (`Value.epochMillis`), so this fits
    }

    /// The time guards, by key.
    static let timeKeys = ["neverTriggerBefore", "skipIfAlreadyTriggeredAfter", "skipIfAlreadyTriggeredBefore",
                           "skipIfAlreadyTriggeredWithinMS", "skipIfAlreadyTriggeredBetweenFromDate",
                           "skipIfAlreadyTriggeredBetweenToDate", "skipIfLargerEventRecordedAfter",
                           "skipIfLargerEventRecordedWithinMS"]

    /// Why the action's guards cannot be read, or `nil`. A guard given with the wrong type used to read as
    /// absent, so the action ran: `neverTriggerBefore` is the seed's defence against an early
    /// `intervalDidEnd`, and a typo in it must stop the action, not disarm the defence.
    public static func problem(in action: [String: Value]) -> String? {
        for key in timeKeys {
            guard let value = action[key] else { continue }
            guard value.epochMillis != nil else {
                return "\(key) must be epoch milliseconds or a date (within ±31,000 years), not this \(value.typeName)"
            }
        }
        let flag = "skipIfLargerEventRecordedSinceIntervalStarted"
        if let value = action[flag], case .bool = value {} else if let value = action[flag] {
            return "\(flag) must be true or false, not this \(value.typeName)"
        }
        return nil
    }
}
