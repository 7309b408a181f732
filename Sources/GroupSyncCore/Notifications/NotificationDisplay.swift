/// A notification as one server numbered it. The number means something only to that server instance:
/// a restarted server counts from 1 again and hands our old numbers to other apps.
public struct ServerNotification: Hashable, Sendable {
    public var number: UInt32
    /// The unique bus name (`:1.42`) that owned `org.freedesktop.Notifications` when the number was given.
    public var serverInstance: String

    public init(number: UInt32, serverInstance: String) {
        self.number = number
        self.serverInstance = serverInstance
    }
}

/// What this device last showed for one ID. Stored in the local-only suite `NotificationSuites.display`,
/// key = the ID, so replace-in-place and "shown once" survive a daemon restart.
///
/// Stored form: `generation: int, postedAt: date, origin: string` (the stamp shown), `shownAt: date`, and while
/// the notification may still be on screen `serverNumber: int, serverInstance: string`.
public struct NotificationDisplay: Hashable, Sendable {
    /// The post last shown.
    public var stamp: NotificationStamp
    public var shownAtMillis: Int64
    /// Where it is on screen; `nil` once closed or known gone.
    public var onScreen: ServerNotification?

    public init(stamp: NotificationStamp, shownAtMillis: Int64, onScreen: ServerNotification?) {
        self.stamp = stamp
        self.shownAtMillis = shownAtMillis
        self.onScreen = onScreen
    }

    /// The state after `record` was shown as `notification`.
    public static func shown(_ record: NotificationRecord, as notification: ServerNotification, atMillis now: Int64) -> NotificationDisplay {
        NotificationDisplay(stamp: record.stamp, shownAtMillis: now, onScreen: notification)
    }

    /// The state after the notification was closed, or found gone with its server. The stamp stays, so the
    /// same post is not shown again.
    public func closed() -> NotificationDisplay {
        NotificationDisplay(stamp: stamp, shownAtMillis: shownAtMillis, onScreen: nil)
    }

    // MARK: Stored form

    public var value: Value {
        var fields: [String: Value] = [
            "generation": .int(stamp.generation),
            "postedAt": EpochMillis.date(stamp.postedAtMillis),
            "origin": .string(stamp.origin.description),
            "shownAt": EpochMillis.date(shownAtMillis),
        ]
        if let onScreen {
            fields["serverNumber"] = .int(Int64(onScreen.number))
            fields["serverInstance"] = .string(onScreen.serverInstance)
        }
        return .dictionary(fields)
    }

    public init(id: String, value: Value) throws(NotificationError) {
        let suite = NotificationSuites.display
        let fields = try StoredFields(value, suite: suite, key: id)
        self.stamp = NotificationStamp(generation: try fields.int("generation"),
                                       postedAtMillis: try fields.millis("postedAt"),
                                       origin: try fields.deviceID("origin"))
        self.shownAtMillis = try fields.millis("shownAt")
        if fields.has("serverNumber") || fields.has("serverInstance") {
            let number = try fields.int("serverNumber")
            guard let number = UInt32(exactly: number), number != 0 else {
                throw .malformedRecord(suite: suite, key: id, reason: "'serverNumber' \(number) is not a notification number")
            }
            self.onScreen = ServerNotification(number: number, serverInstance: try fields.string("serverInstance"))
        } else {
            self.onScreen = nil
        }
    }
}
