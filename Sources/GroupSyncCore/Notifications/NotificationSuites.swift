/// The reserved suites that hold notification state, and the rule that keeps local state on the device.
///
/// A post or dismiss is an ordinary entry so replication carries it like any other write (and a dismiss is
/// state that converges, not a message that can be lost). What only makes sense on one device — the
/// server's notification numbers, what this device last showed, `--scope local` posts — lives in suites
/// whose names start with `localOnlyPrefix`, which replication must neither send nor accept.
public enum NotificationSuites {
    /// Suites starting with this never leave the device.
    public static let localOnlyPrefix = "groupsync.local."

    /// Records of `--scope all` posts, key = notification ID. Replicated.
    public static let sharedRecords = "groupsync.notifications"
    /// Records of `--scope local` posts, key = notification ID. Local only.
    public static let localRecords = "groupsync.local.notifications"
    /// What this device shows for each ID (`NotificationDisplay`), key = notification ID. Local only.
    public static let display = "groupsync.local.notification-display"

    /// Whether replication must skip `suite` in both directions.
    public static func isLocalOnly(_ suite: String) -> Bool {
        suite.hasPrefix(localOnlyPrefix)
    }
}
