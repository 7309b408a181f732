/// The seed's debounce: a post within `minIntervalSeconds` of the last accepted post of the same ID is dropped.
/// The last post time is the stored record's `postedAt`, so a daemon restart does not reset it.
public enum NotificationDebounce {
    public enum Decision: Hashable, Sendable {
        case post
        /// Dropped; a post at or after `untilMillis` would go through.
        case suppress(untilMillis: Int64)
    }

    public static func decide(lastPostedAtMillis: Int64?, minIntervalSeconds: Double, nowMillis: Int64) -> Decision {
        guard let last = lastPostedAtMillis, minIntervalSeconds > 0 else { return .post }
        let interval = Int64((minIntervalSeconds * 1000).rounded(.up))
        let (elapsed, overflow) = nowMillis.subtractingReportingOverflow(last)
        // A last post in the future (our clock set back, or the posting peer's clock ahead) counts as recent
        // within one interval, and as a broken clock beyond it: otherwise one wrong clock could mute an ID for
        // as long as it is wrong.
        guard !overflow, elapsed < interval, elapsed > -interval else { return .post }
        return .suppress(untilMillis: last + interval)
    }
}
