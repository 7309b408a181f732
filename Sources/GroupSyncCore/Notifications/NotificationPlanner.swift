/// What to do on this device for one ID, given the stored record and what this device last showed.
public struct NotificationPlan: Hashable, Sendable {
    public enum Action: Hashable, Sendable {
        case nothing
        /// Show `content`; in place of `replacing` when given (it is on the server running now).
        case show(NotificationContent, replacing: ServerNotification?)
        case close(ServerNotification)
        /// The notification went away with the server that showed it: only forget its number
        /// (`NotificationDisplay.closed()`). Closing that number on the new server could close another app's.
        case forget
    }

    public enum Reason: String, Hashable, Sendable, CustomStringConvertible {
        case nothingPosted = "nothing posted"
        case withdrawn = "record deleted"
        case foreignLocalRecord = "local-scope record from another device, not shown"
        case dismissed = "dismissed"
        case dismissedWithServer = "dismissed; it went away with the server that showed it"
        case alreadyClosed = "dismissed and already closed"
        /// Dismissed before this device showed it (still waiting for a server, say): it never will now.
        case neverShownHere = "dismissed before it was shown here; it will not be"
        case alreadyShown = "already shown"
        case stale = "older than its time to live, not shown"
        case supersededByStale = "replaced by a post now older than its time to live: taken down, not replaced"
        case firstShow = "new notification"
        case replaceInPlace = "replaces the one on screen"
        case freshAfterServerRestart = "notification server restarted, posted fresh"

        public var description: String { rawValue }
    }

    public var action: Action
    public var reason: Reason

    public init(_ action: Action, _ reason: Reason) {
        self.action = action
        self.reason = reason
    }
}

/// The notification rules in one pure function, used alike for local commands, replicated writes, a server
/// that appeared and a daemon that restarted: the stored record is the truth, the display state is memory.
public enum NotificationPlanner {
    /// - Parameters:
    ///   - record: the ID's current record (`NotificationRecord.current`), `nil` if none or deleted.
    ///   - display: what this device last showed for the ID.
    ///   - serverInstance: the unique bus name of the notification server running now. Plan only while one
    ///     is reachable; with none, keep the state and plan again when it appears.
    ///   - originClockOffsetMillis: the posting device's clock minus this one's, when known (a session measured
    ///     it): the TTL runs on the poster's clock, so that a device whose clock is ahead does not take a post
    ///     that arrives at once for one that comes back late.
    public static func plan(record: NotificationRecord?, display: NotificationDisplay?, serverInstance: String,
                            device: DeviceID, nowMillis: Int64, originClockOffsetMillis: Int64 = 0) -> NotificationPlan {
        // The one on screen, if it is on this server; a number from an earlier server instance is not ours now.
        let onThisServer = display?.onScreen.flatMap { $0.serverInstance == serverInstance ? $0 : nil }

        guard let record else {
            // Someone deleted the record (`groupsync delete`): take the notification down with it.
            if let onThisServer { return NotificationPlan(.close(onThisServer), .withdrawn) }
            return NotificationPlan(display?.onScreen == nil ? .nothing : .forget, .nothingPosted)
        }
        // A local post never leaves its device; if replication ever let one through, it still stays unseen here.
        if record.scope == .local && record.stamp.origin != device {
            return NotificationPlan(.nothing, .foreignLocalRecord)
        }
        if record.isDismissed {
            // Whatever is on screen for the ID goes, even an older post than the one dismissed: the user
            // dismissed this ID, and a dismiss written on a device that lagged behind must still close it.
            if let onThisServer { return NotificationPlan(.close(onThisServer), .dismissed) }
            if display?.onScreen != nil { return NotificationPlan(.forget, .dismissedWithServer) }
            return NotificationPlan(.nothing, display == nil ? .neverShownHere : .alreadyClosed)
        }
        // Replication redelivers after every reconnect, and the daemon replans after every restart: a post
        // is shown once, even if it has since been closed by the user or lost with a server.
        if display?.stamp == record.stamp { return NotificationPlan(.nothing, .alreadyShown) }
        // A device that comes back after the TTL does not pop old news; and what it still shows of the ID is
        // older news yet (the stale post replaced it), so it goes.
        if record.isStale(atMillis: nowMillis.addingReportingOverflow(originClockOffsetMillis).partialValue) {
            if let onThisServer { return NotificationPlan(.close(onThisServer), .supersededByStale) }
            // Shown on a server that went, or (planned without one) on a server to ask about first.
            if display?.onScreen != nil { return NotificationPlan(.forget, .supersededByStale) }
            return NotificationPlan(.nothing, .stale)
        }

        if let onThisServer { return NotificationPlan(.show(record.content, replacing: onThisServer), .replaceInPlace) }
        let reason: NotificationPlan.Reason = display?.onScreen == nil ? .firstShow : .freshAfterServerRestart
        return NotificationPlan(.show(record.content, replacing: nil), reason)
    }

    /// The plan when no notification server can be reached: nothing can be on a server that is not there, so
    /// this is `plan` with no notification on screen that is ours. `.nothing` here is `.nothing` on any
    /// server (stale, dismissed and closed, already shown, nothing posted), so the caller need not even look
    /// for a bus; only `.show` and `.forget` depend on a server being there.
    public static func planWithoutServer(record: NotificationRecord?, display: NotificationDisplay?,
                                         device: DeviceID, nowMillis: Int64, originClockOffsetMillis: Int64 = 0) -> NotificationPlan {
        // No real server instance is empty: a unique bus name always starts with ':'.
        plan(record: record, display: display, serverInstance: "", device: device, nowMillis: nowMillis, originClockOffsetMillis: originClockOffsetMillis)
    }
}
