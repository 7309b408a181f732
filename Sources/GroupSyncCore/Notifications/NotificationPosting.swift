/// What `notify post` and `notify dismiss` write. Pure: the caller reads the current record, asks here, and
/// stores the returned record under `record.suite` / `record.id`; showing and closing follow from the stored
/// state through `NotificationPlanner`, the same way for a local command and for a write replicated from a peer.
public enum NotificationPosting {
    public enum PostOutcome: Hashable, Sendable {
        /// Store this record; it is the new current post of its ID.
        case accepted(NotificationRecord)
        /// Debounced: the last post of this ID that counts was at `lastPostedAtMillis`; posts go through again from `untilMillis`.
        case suppressed(lastPostedAtMillis: Int64, untilMillis: Int64)
    }

    public enum DismissOutcome: Hashable, Sendable {
        /// Store this record: the current post, marked dismissed.
        case accepted(NotificationRecord)
        case alreadyDismissed(NotificationRecord)
        case nothingPosted
    }

    /// - Parameters:
    ///   - current: the ID's current record over both scopes (`NotificationRecord.current`).
    ///   - shownHere: what this device last showed for the ID (`NotificationDisplay`).
    ///   - originClockOffsetMillis: the clock of the device that made `current` minus this one's, when a session
    ///     measured it (0 for this device's own post). A peer's clock may run minutes ahead (sessions accept up
    ///     to `--max-clock-drift`): its post, taken at its stamp, looked like one from a broken clock and held
    ///     nothing back (found by review), so its stamp is read on this clock.
    public static func post(_ request: NotificationRequest, current: NotificationRecord?, shownHere: NotificationDisplay?,
                            device: DeviceID, nowMillis: Int64, originClockOffsetMillis: Int64 = 0) -> PostOutcome {
        let lastPostedAt = current.flatMap {
            countsForDebounce($0, shownHere: shownHere) ? $0.stamp.postedAtMillis.saturatingSubtracting(originClockOffsetMillis) : nil
        }
        if case .suppress(let until) = NotificationDebounce.decide(lastPostedAtMillis: lastPostedAt,
                                                                  minIntervalSeconds: request.minIntervalSeconds,
                                                                  nowMillis: nowMillis) {
            return .suppressed(lastPostedAtMillis: lastPostedAt!, untilMillis: until)
        }
        let generation = (current?.stamp.generation ?? 0) &+ 1
        let stamp = NotificationStamp(generation: generation, postedAtMillis: nowMillis, origin: device)
        return .accepted(NotificationRecord(id: request.id, content: request.content, scope: request.scope,
                                            ttlSeconds: request.ttlSeconds, stamp: stamp))
    }

    /// The debounce runs from the last *shown* post of the ID (issue 4). A local post this device never showed
    /// (still waiting for a notification server, or dismissed while it waited) holds nothing back: a newer one
    /// replaces it, or the user would later see the stale one, or nothing, and never the new. A post relayed to
    /// every device may have been shown on another, which this device cannot know, so it counts. A post shown
    /// and then dismissed counts too (its display keeps the stamp): the seed keeps `lastSentAt` when the app
    /// dismisses the shield notification, so coming straight back to a blocked app does not post it again.
    static func countsForDebounce(_ current: NotificationRecord, shownHere: NotificationDisplay?) -> Bool {
        current.scope == .all || shownHere?.stamp == current.stamp
    }

    public static func dismiss(current: NotificationRecord?, device: DeviceID, nowMillis: Int64) -> DismissOutcome {
        guard var record = current else { return .nothingPosted }
        guard !record.isDismissed else { return .alreadyDismissed(record) }
        record.dismissal = NotificationRecord.Dismissal(atMillis: nowMillis, by: device)
        return .accepted(record)
    }
}
