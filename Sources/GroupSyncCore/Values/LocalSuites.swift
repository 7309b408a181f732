/// Suites that belong to one device and never leave it: what a device showed, when, under which
/// notification server number — state that would be wrong on any other machine. Replication neither sends
/// them nor accepts them from a peer (a peer has no business writing this device's local state).
public enum LocalSuites {
    public static let prefix = OwnSuites.prefix + "local."

    public static func isLocalOnly(_ suite: String) -> Bool { EntryName.starts(suite, with: prefix) }
}
