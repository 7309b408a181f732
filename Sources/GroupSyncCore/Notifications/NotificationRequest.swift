/// One `notify post`: what to show, under which fixed ID, how often at most, where, and for how long it is news.
public struct NotificationRequest: Hashable, Sendable {
    /// The seed's debounce: the shield asks for its configuration several times per showing.
    public static let defaultMinIntervalSeconds: Double = 30
    /// How long a post stays worth showing. A device that comes back later than this (a laptop opened the
    /// next morning) must not pop yesterday's "time's up"; an hour still covers a short suspend or a slow link.
    public static let defaultTTLSeconds: Double = 3600
    /// Well under the store's name limit; an ID is a key in several suites.
    public static let maxIDBytes = 256
    /// Ten years: beyond any real use, and small enough that seconds × 1000 stays far inside Int64 millis.
    public static let maxSeconds: Double = 10 * 365 * 86_400
    /// IDs of GroupSync's own notifications ("time's up", the countdown) begin so. An app's post under one
    /// would be replaced by the daemon's, and its dismissal would take the daemon's down (found by review).
    public static let reservedPrefix = "groupsync."

    /// The fixed identifier: a post under an ID already shown replaces that notification in place.
    public let id: String
    public let content: NotificationContent
    /// A post within this many seconds of the last accepted post of the same ID is suppressed.
    public let minIntervalSeconds: Double
    public let scope: NotificationScope
    /// After this many seconds from posting, a device that has not shown the post yet never will.
    public let ttlSeconds: Double

    /// `groupSyncsOwn`: a post of GroupSync itself, whose ID may begin with `reservedPrefix`.
    public init(id: String, content: NotificationContent,
                minIntervalSeconds: Double = defaultMinIntervalSeconds,
                scope: NotificationScope = .default,
                ttlSeconds: Double = defaultTTLSeconds, groupSyncsOwn: Bool = false) throws(NotificationError) {
        try Self.validate(id: id, reservedAllowed: groupSyncsOwn)
        guard !content.title.isEmpty else { throw .emptyTitle }
        try Self.validate(minIntervalSeconds: minIntervalSeconds)
        guard ttlSeconds.isFinite, ttlSeconds > 0, ttlSeconds <= Self.maxSeconds else { throw .invalidTTL(ttlSeconds) }
        self.id = id
        self.content = content
        self.minIntervalSeconds = minIntervalSeconds
        self.scope = scope
        self.ttlSeconds = ttlSeconds
    }

    /// A minimum interval between posts of one ID: finite, not negative, bounded.
    public static func validate(minIntervalSeconds: Double) throws(NotificationError) {
        guard minIntervalSeconds.isFinite, minIntervalSeconds >= 0, minIntervalSeconds <= maxSeconds else {
            throw .invalidMinInterval(minIntervalSeconds)
        }
    }

    /// The rules for an app's ID, which is also a store key: non-empty, bounded, printable, and not GroupSync's.
    public static func validate(id: String) throws(NotificationError) {
        try validate(id: id, reservedAllowed: false)
    }

    /// Whether `id` is one GroupSync keeps for its own notifications (`reservedPrefix`, compared as bytes).
    public static func isReserved(_ id: String) -> Bool { EntryName.starts(id, with: reservedPrefix) }

    static func validate(id: String, reservedAllowed: Bool) throws(NotificationError) {
        guard !id.isEmpty else { throw .invalidID(id, reason: "is empty") }
        guard reservedAllowed || !isReserved(id) else {
            throw .invalidID(id, reason: "begins with '\(reservedPrefix)', which GroupSync keeps for its own notifications")
        }
        guard id.utf8.count <= maxIDBytes else { throw .invalidID(id, reason: "is longer than \(maxIDBytes) bytes") }
        guard !id.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .invalidID(id, reason: "contains a control character")
        }
    }
}
