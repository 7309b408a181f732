/// The reserved suites that hold notification state, and the rule that keeps local state on the device.
///
/// A post or dismiss is an ordinary entry so replication carries it like any other write (and a dismiss is
/// state that converges, not a message that can be lost). What only makes sense on one device — the
/// server's notification numbers, what this device last showed, `--scope local` posts — lives in local-only
/// suites (`LocalSuites`), which replication neither sends nor accepts.
public enum NotificationSuites {
    /// Records of `--scope all` posts, key = notification ID. Replicated.
    public static let sharedRecords = "groupsync.notifications"
    /// Records of `--scope local` posts, key = notification ID. Local only.
    public static let localRecords = LocalSuites.prefix + "notifications"
    /// What this device shows for each ID (`NotificationDisplay`), key = notification ID. Local only.
    public static let display = LocalSuites.prefix + "notification-display"
}
