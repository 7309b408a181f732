/// `groupsync notify shield --suite S --config-key K --app NAME`: the seed's `postShieldShownNotification`,
/// with the App Group read and written by the caller.
public enum ShieldNotification {
    public enum Outcome: Hashable, Sendable {
        /// Post `request` (through `NotificationPosting.post`); once it is shown, store `lastSentAt` under
        /// `ShieldNotificationConfig.lastSentAtKey` in the same suite, where the seed keeps it. The debounce was
        /// decided here, by `…LastSentAt` alone: the request's own minimum interval is 0.
        case post(NotificationRequest, lastSentAt: Value)
        /// Debounced by the stored last-sent time.
        case suppressed(lastSentAtMillis: Int64, untilMillis: Int64)
    }

    /// - Parameters:
    ///   - config: the value at `suite`/`configKey`, `nil` if there is none.
    ///   - lastSentAt: the value at `suite`/`lastSentAtKey(configKey)`, `nil` if there is none.
    public static func decide(config: Value?, lastSentAt: Value?, suite: String, configKey: String,
                              appName: String, nowMillis: Int64) throws(NotificationError) -> Outcome {
        guard let config else { throw .missingConfig(suite: suite, key: configKey) }
        let parsed = try ShieldNotificationConfig(value: config, suite: suite, key: configKey)
        let request: NotificationRequest
        do {
            request = try parsed.request(configKey: configKey,
                                         placeholders: NotificationPlaceholders([.applicationOrDomainDisplayName: appName]))
        } catch {
            // An empty title or a bad identifier came from the configuration: name it, so the app knows what to fix.
            throw .malformedConfig(suite: suite, key: configKey, reason: error.description)
        }
        let last = lastSentAt.flatMap(lastSentAtMillis)
        if case .suppress(let until) = NotificationDebounce.decide(lastPostedAtMillis: last,
                                                                  minIntervalSeconds: parsed.minIntervalSeconds,
                                                                  nowMillis: nowMillis) {
            return .suppressed(lastSentAtMillis: last!, untilMillis: until)
        }
        // Epoch seconds as a double: what the seed's `userDefaults.set(now, …)` writes and `double(forKey:)` reads.
        return .post(request, lastSentAt: ShieldNotificationConfig.lastSentAt(nowMillis: nowMillis))
    }

    /// The seed reads the time with `double(forKey:)`, which gives 0 — never sent — for anything but a number.
    public static func lastSentAtMillis(_ value: Value) -> Int64? {
        switch value {
        case .double(let seconds), .date(let seconds): EpochMillis.from(seconds: seconds)
        case .int(let seconds): EpochMillis.from(seconds: Double(seconds))
        default: nil
        }
    }
}
