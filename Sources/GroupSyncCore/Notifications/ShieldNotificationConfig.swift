/// The shield-shown notification configuration an app writes into its App Group ahead of time, in the seed's
/// shape, and read on every "shield shown" signal:
///
///     {"payload": {"title": "…", "body": "…", "subtitle": "…", "identifier": "…", "interruptionLevel": "passive"},
///      "minIntervalSeconds": 30}
///
/// Only `payload.title` is required. Two optional GroupSync fields sit beside `minIntervalSeconds`: `scope`
/// (`local`, the default, or `all`) and `ttlSeconds`. Other payload fields of the iOS action (`sound`, `badge`,
/// `userInfo`, …) have no desktop meaning and are ignored.
public struct ShieldNotificationConfig: Hashable, Sendable {
    /// The seed keeps the last-sent time beside the configuration, under the configuration's key plus this.
    public static let lastSentAtSuffix = "LastSentAt"

    /// The fixed notification ID; without one, the configuration key serves, which is just as fixed.
    public var identifier: String?
    public var title: String
    public var subtitle: String?
    public var body: String
    public var level: NotificationLevel
    public var minIntervalSeconds: Double
    public var scope: NotificationScope
    public var ttlSeconds: Double

    /// Reads the configuration stored at `suite`/`key` (the names only label errors).
    public init(value: Value, suite: String, key: String) throws(NotificationError) {
        let describe: (String) -> NotificationError = { .malformedConfig(suite: suite, key: key, reason: $0) }
        let config = try StoredFields(value, describe: describe)
        guard let payloadValue = config.fields["payload"] else { throw describe("'payload' is missing") }
        let payload = try StoredFields(payloadValue) { describe("payload: " + $0) }
        do {
            identifier = try payload.optionalString("identifier")
            title = try payload.string("title")
            subtitle = try payload.optionalString("subtitle")
            body = try payload.optionalString("body") ?? ""
            level = try payload.optionalString("interruptionLevel").map { text throws(NotificationError) in
                try NotificationLevel(parsing: text)
            } ?? .default
            // The seed: `config["minIntervalSeconds"] as? Double ?? 30`.
            minIntervalSeconds = try config.optionalSeconds("minIntervalSeconds") ?? NotificationRequest.defaultMinIntervalSeconds
            scope = try config.optionalString("scope").map { text throws(NotificationError) in
                try NotificationScope(parsing: text)
            } ?? .default
            ttlSeconds = try config.optionalSeconds("ttlSeconds") ?? NotificationRequest.defaultTTLSeconds
        } catch {
            if case .malformedConfig = error { throw error }
            throw describe(error.description)
        }
    }

    public static func lastSentAtKey(configKey: String) -> String { configKey + lastSentAtSuffix }

    /// Refuses a configuration key whose `…LastSentAt` could not be stored: the notification would be shown
    /// and then fail, never debounced (found by review). Checked before anything is shown.
    public static func validate(configKey: String) throws(NotificationError) {
        if lastSentAtKey(configKey: configKey).utf8.count > EntryName.maxBytes { throw .configKeyTooLong(configKey) }
    }
    /// The `…LastSentAt` value for a notification sent at `nowMillis`: epoch seconds, as the seed keeps it.
    public static func lastSentAt(nowMillis: Int64) -> Value { .double(Double(nowMillis) / 1000) }

    /// The request one shield showing posts. A desktop notification has no subtitle line, so it leads the body.
    /// Its own minimum interval is 0: `minIntervalSeconds` debounces the showing by the stored `…LastSentAt`
    /// (`ShieldNotification.decide`), as the seed does, and the post must not be debounced again by its ID's
    /// last post, which may be another device's showing or one the app has since reset the stamp for.
    public func request(configKey: String, placeholders: NotificationPlaceholders) throws(NotificationError) -> NotificationRequest {
        let fullBody = [subtitle, body.isEmpty ? nil : body].compactMap { $0 }.joined(separator: "\n")
        try Self.validate(configKey: configKey)
        let content = try NotificationContent(title: title, body: fullBody, level: level).filling(placeholders)
        let request = try NotificationRequest(id: identifier ?? configKey, content: content, minIntervalSeconds: 0,
                                              scope: scope, ttlSeconds: ttlSeconds)
        try NotificationRequest.validate(minIntervalSeconds: minIntervalSeconds)
        return request
    }
}
