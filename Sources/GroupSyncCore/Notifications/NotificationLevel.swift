/// How insistently a notification asks for attention, named as iOS names a payload's `interruptionLevel`
/// so an App Group payload carries over unchanged.
public enum NotificationLevel: String, CaseIterable, Hashable, Sendable {
    /// Delivered quietly: no sound, and no banner where the server can tell (the countdown updated every 15 s).
    case passive
    case active
    /// Stays until the user deals with it.
    case timeSensitive
    case critical

    /// The iOS default for a payload without a level.
    public static let `default` = NotificationLevel.active

    /// Parses the exact iOS name; a near miss is refused rather than guessed, so a typo cannot turn a
    /// quiet notification into a loud one.
    public init(parsing text: String) throws(NotificationError) {
        guard let level = NotificationLevel(rawValue: text) else { throw .unknownLevel(text) }
        self = level
    }

    /// What the level asks of a freedesktop notification server.
    public var presentation: NotificationPresentation {
        switch self {
        case .passive:
            // Low urgency is the one standard signal for "no banner" (GNOME and others list it silently).
            // Not `transient`: iOS keeps a passive notification in the list, and a transient one skips the
            // server's history, so a passive notification would be nowhere at all on servers without banners.
            NotificationPresentation(urgency: .low, expireTimeoutMillis: NotificationPresentation.serverDefaultTimeout,
                                     suppressSound: true, resident: false, category: "x-groupsync.passive")
        case .active:
            NotificationPresentation(urgency: .normal, expireTimeoutMillis: NotificationPresentation.serverDefaultTimeout,
                                     suppressSound: false, resident: false, category: "x-groupsync.active")
        case .timeSensitive:
            // Normal urgency (it is not an emergency) but it must not slip away unseen: never expires, and
            // stays after an action is invoked.
            NotificationPresentation(urgency: .normal, expireTimeoutMillis: NotificationPresentation.neverExpires,
                                     suppressSound: false, resident: true, category: "x-groupsync.timeSensitive")
        case .critical:
            // The spec says critical notifications should not expire; saying so explicitly covers servers that
            // would otherwise apply their default timeout.
            NotificationPresentation(urgency: .critical, expireTimeoutMillis: NotificationPresentation.neverExpires,
                                     suppressSound: false, resident: false, category: "x-groupsync.critical")
        }
    }
}
