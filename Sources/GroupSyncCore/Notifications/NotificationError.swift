/// Why a notification request, record or configuration was refused. The text says what to fix.
public enum NotificationError: Error, Hashable, Sendable, CustomStringConvertible {
    case invalidID(String, reason: String)
    case emptyTitle
    case unknownLevel(String)
    case unknownScope(String)
    case invalidMinInterval(Double)
    case invalidTTL(Double)
    /// A stored record or display state that does not have the expected shape (written by hand, or damaged).
    case malformedRecord(suite: String, key: String, reason: String)
    /// No shield notification configuration where the signal said to look.
    case missingConfig(suite: String, key: String)
    /// A shield notification configuration that does not have the seed's shape.
    case malformedConfig(suite: String, key: String, reason: String)
    /// A title or body that its placeholders' values would make longer than `NotificationPlaceholders.maxFilledBytes`.
    case filledTooLong(field: String, bytes: Int)
    /// A shield configuration key too long for its `…LastSentAt` stamp to be a key.
    case configKeyTooLong(String)

    public var description: String {
        switch self {
        case .invalidID(let id, let reason):
            "notification ID '\(id)' \(reason)"
        case .emptyTitle:
            "a notification needs a non-empty title"
        case .unknownLevel(let text):
            "unknown level '\(text)': use one of \(NotificationLevel.allCases.map(\.rawValue).joined(separator: ", "))"
        case .unknownScope(let text):
            "unknown scope '\(text)': use one of \(NotificationScope.allCases.map(\.rawValue).joined(separator: ", "))"
        case .invalidMinInterval(let seconds):
            "minimum interval \(seconds) s is not a number of seconds from 0 to \(Int(NotificationRequest.maxSeconds)) (10 years)"
        case .invalidTTL(let seconds):
            "time to live \(seconds) s is not a number of seconds above 0 and at most \(Int(NotificationRequest.maxSeconds)) (10 years)"
        case .malformedRecord(let suite, let key, let reason):
            "notification state \(suite)/\(key) is malformed: \(reason)"
        case .missingConfig(let suite, let key):
            "no notification configuration at \(suite)/\(key): the app writes it there first"
        case .filledTooLong(let field, let bytes):
            "the \(field), its placeholders filled in, would be \(bytes) bytes; at most \(NotificationPlaceholders.maxFilledBytes) are shown"
        case .configKeyTooLong(let key):
            "the configuration key is \(key.utf8.count) bytes: its debounce stamp (the key + \"\(ShieldNotificationConfig.lastSentAtSuffix)\") must be a key too, so at most \(EntryName.maxBytes - ShieldNotificationConfig.lastSentAtSuffix.utf8.count) bytes"
        case .malformedConfig(let suite, let key, let reason):
            "notification configuration \(suite)/\(key) is malformed: \(reason) (expected {\"payload\": {\"title\": …, \"body\": …}, \"minIntervalSeconds\": 30})"
        }
    }
}
