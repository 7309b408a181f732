/// Suites whose names start with `groupsync.` hold GroupSync's own records (the balance, notification
/// records, local state). An app's App Group is never one of them: commands that act on an app's suite
/// (`fire`, the shield notification) refuse them, since what they write there is not a record those
/// suites' readers expect.
public enum OwnSuites {
    public static let prefix = "groupsync."

    public static func isOwn(_ suite: String) -> Bool { EntryName.starts(suite, with: prefix) }

    /// Why `suite` cannot be used where an app's App Group is meant, or nil.
    public static func problem(with suite: String, usedAs what: String) -> String? {
        isOwn(suite) ? "'\(suite)' is one of GroupSync's own suites (\(prefix)…), not an App Group: \(what) needs the app's suite" : nil
    }
}
