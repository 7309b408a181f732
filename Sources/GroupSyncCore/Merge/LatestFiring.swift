/// An `events_…` key records *the last time* its callback fired (epoch ms): guards such as
/// `skipIfAlreadyTriggeredWithinMS` read it as that. `fire` keeps the later time on one device (a callback
/// reported late with `--at` leaves it alone), but last-writer-wins across devices keeps the *last written*:
/// a late report written on one side of a partition replaced the later firing of the other side when they
/// met, and an action ran again that its guard should have skipped (found by review).
///
/// So when a peer's record wins by last-writer-wins but holds an earlier time than the one it replaces,
/// the merge writes the later time back at once as a write of this device, in the same transaction. That
/// write is newer than both and carries the larger time, so every device ends on it: the record becomes the
/// latest firing any device reported. It changes nothing else: a deletion (an app clearing the history) is
/// still a deletion, and a record that is not a time merges as any value does.
public enum LatestFiring {
    public static let keyPrefix = "events_"

    /// Whether `entry` could be a firing record whose merge may need `restored`: the stored entry is read
    /// for these alone.
    public static func isRecord(_ entry: Entry) -> Bool {
        entry.value?.epochMillis != nil && EntryName.starts(entry.key, with: keyPrefix) && !LocalSuites.isLocalOnly(entry.suite)
    }

    /// The value to write back after `incoming` replaced `stored`: the stored one, when it is a later time.
    public static func restored(_ stored: Entry?, replacedBy incoming: Entry) -> Value? {
        guard isRecord(incoming), let stored, let kept = stored.value, let keptTime = kept.epochMillis,
              let incomingTime = incoming.value?.epochMillis, keptTime > incomingTime else { return nil }
        return kept
    }
}
