/// The freedesktop Desktop Notifications `urgency` hint (a byte).
public enum NotificationUrgency: UInt8, Hashable, Sendable {
    case low = 0
    case normal = 1
    case critical = 2
}

/// How a server should present a notification: the `Notify` call's `expire_timeout` and hints.
public struct NotificationPresentation: Hashable, Sendable {
    /// `expire_timeout`: let the server pick its usual timeout.
    public static let serverDefaultTimeout: Int32 = -1
    /// `expire_timeout`: keep the notification until the user closes it.
    public static let neverExpires: Int32 = 0

    public var urgency: NotificationUrgency
    /// Milliseconds, or one of the two special values above.
    public var expireTimeoutMillis: Int32
    /// The `suppress-sound` hint.
    public var suppressSound: Bool
    /// The `resident` hint: the server keeps the notification after an action is invoked.
    public var resident: Bool
    /// The `category` hint; `x-` names are the spec's vendor space, and let a server's rules (dunst's
    /// `category =` for one) style or silence a level the user finds noisy.
    public var category: String

    public init(urgency: NotificationUrgency, expireTimeoutMillis: Int32, suppressSound: Bool, resident: Bool, category: String) {
        self.urgency = urgency
        self.expireTimeoutMillis = expireTimeoutMillis
        self.suppressSound = suppressSound
        self.resident = resident
        self.category = category
    }
}
