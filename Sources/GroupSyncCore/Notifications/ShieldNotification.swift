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

    /// Which `…LastSentAt` debounces this device's shield post. The debounce is this device's: the shield asks
    /// several times per showing, on its own screen. The suite replicates, so the stored `…LastSentAt` may be
    /// another device's shield, a different showing. Written last on this device, it stands as it is: this
    /// device's stamp, or the app's own reset of it (0, or deleted: `stored` nil), which lets the next shield
    /// through as in the seed. Written by another device, it counts for nothing; this device's stamp as it last
    /// wrote it while running (`ownStamp`) counts instead.
    public static func lastSentAt(stored: Value?, writtenBy: DeviceID?, device: DeviceID, ownStamp: Value?) -> Value? {
        writtenBy == device ? stored : ownStamp
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
