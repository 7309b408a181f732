/// A post as a store entry: suite `scope.recordSuite`, key = the notification ID, value = `value`.
///
/// Replication carries it like any write, and last-writer-wins decides between concurrent writes of one ID.
/// A dismiss rewrites the same record with `dismissed: true`, so "dismissed" is replicated state that every
/// device converges on, not a message that can be lost. When a post and a dismiss race, the later write wins
/// whole: at worst a notification is closed that was posted in the same instant as the dismiss — the quiet
/// failure, where the other design (a separate dismissal) could pop a dismissed notification again.
///
/// Stored form (a dictionary; unknown fields are ignored so a newer device can add some):
///
///     title: string, body: string, level: "passive"|"active"|"timeSensitive"|"critical",
///     scope: "local"|"all", ttlSeconds: double,
///     generation: int, postedAt: date, origin: string (device ID),
///     dismissed: bool, dismissedAt: date, dismissedBy: string (device ID)   ← the last two only when dismissed
public struct NotificationRecord: Hashable, Sendable {
    /// Who closed it for everyone, and when.
    public struct Dismissal: Hashable, Sendable {
        public var atMillis: Int64
        public var by: DeviceID

        public init(atMillis: Int64, by: DeviceID) {
            self.atMillis = atMillis
            self.by = by
        }
    }

    /// The suite of this device's record that storing this one replaces, if any. A post for every device
    /// replaces this device's own local post of the ID, which must not come back when a device whose clock is
    /// behind posts the ID later (found by review: a replaced and dismissed local post was shown again). A local
    /// post leaves the shared record alone: peers still show it.
    public var replacedRecordSuite: String? { scope == .all ? NotificationScope.local.recordSuite : nil }

    public let id: String
    public var content: NotificationContent
    public var scope: NotificationScope
    public var ttlSeconds: Double
    public var stamp: NotificationStamp
    public var dismissal: Dismissal?

    public init(id: String, content: NotificationContent, scope: NotificationScope, ttlSeconds: Double,
                stamp: NotificationStamp, dismissal: Dismissal? = nil) {
        self.id = id
        self.content = content
        self.scope = scope
        self.ttlSeconds = ttlSeconds
        self.stamp = stamp
        self.dismissal = dismissal
    }

    /// Where the record is stored.
    public var suite: String { scope.recordSuite }

    public var isDismissed: Bool { dismissal != nil }

    /// From this moment a device that has not shown the post yet never will.
    public var expiresAtMillis: Int64 {
        stamp.postedAtMillis.addingReportingOverflow(Int64((ttlSeconds * 1000).rounded())).partialValue
    }

    public func isStale(atMillis now: Int64) -> Bool { now >= expiresAtMillis }

    /// Of the records one ID has (at most one per scope), the latest post: the one to show.
    public static func current(_ records: [NotificationRecord?]) -> NotificationRecord? {
        records.compactMap { $0 }.max { $0.stamp < $1.stamp }
    }

    // MARK: Stored form

    public var value: Value {
        var fields: [String: Value] = [
            "title": .string(content.title),
            "body": .string(content.body),
            "level": .string(content.level.rawValue),
            "scope": .string(scope.rawValue),
            "ttlSeconds": .double(ttlSeconds),
            "generation": .int(stamp.generation),
            "postedAt": EpochMillis.date(stamp.postedAtMillis),
            "origin": .string(stamp.origin.description),
            "dismissed": .bool(dismissal != nil),
        ]
        if let dismissal {
            fields["dismissedAt"] = EpochMillis.date(dismissal.atMillis)
            fields["dismissedBy"] = .string(dismissal.by.description)
        }
        return .dictionary(fields)
    }

    /// Reads a stored record; `suite` and `id` only name the place in errors.
    public init(id: String, value: Value, suite: String) throws(NotificationError) {
        let fields = try StoredFields(value, suite: suite, key: id)
        let level: NotificationLevel
        let scope: NotificationScope
        do {
            level = try NotificationLevel(parsing: try fields.string("level"))
            scope = try NotificationScope(parsing: try fields.string("scope"))
        } catch {
            throw .malformedRecord(suite: suite, key: id, reason: error.description)
        }
        let ttl = try fields.seconds("ttlSeconds")
        guard ttl.isFinite, ttl > 0, ttl <= NotificationRequest.maxSeconds else {
            throw .malformedRecord(suite: suite, key: id, reason: "'ttlSeconds' \(ttl) is out of range")
        }
        self.id = id
        self.content = NotificationContent(title: try fields.string("title"), body: try fields.string("body"), level: level)
        self.scope = scope
        self.ttlSeconds = ttl
        self.stamp = NotificationStamp(generation: try fields.int("generation"),
                                       postedAtMillis: try fields.millis("postedAt"),
                                       origin: try fields.deviceID("origin"))
        self.dismissal = try fields.bool("dismissed")
            ? Dismissal(atMillis: try fields.millis("dismissedAt"), by: try fields.deviceID("dismissedBy"))
            : nil
    }
}
