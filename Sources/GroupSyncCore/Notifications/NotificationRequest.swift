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

    /// The fixed identifier: a post under an ID already shown replaces that notification in place.
    public let id: String
    public let content: NotificationContent
    /// A post within this many seconds of the last accepted post of the same ID is suppressed.
    public let minIntervalSeconds: Double
    public let scope: NotificationScope
    /// After this many seconds from posting, a device that has not shown the post yet never will.
    public let ttlSeconds: Double

    public init(id: String, content: NotificationContent,
                minIntervalSeconds: Double = defaultMinIntervalSeconds,
                scope: NotificationScope = .default,
                ttlSeconds: Double = defaultTTLSeconds) throws(NotificationError) {
        try Self.validate(id: id)
        guard !content.title.isEmpty else { throw .emptyTitle }
        guard minIntervalSeconds.isFinite, minIntervalSeconds >= 0, minIntervalSeconds <= Self.maxSeconds else {
            throw .invalidMinInterval(minIntervalSeconds)
        }
        guard ttlSeconds.isFinite, ttlSeconds > 0, ttlSeconds <= Self.maxSeconds else { throw .invalidTTL(ttlSeconds) }
        self.id = id
        self.content = content
        self.minIntervalSeconds = minIntervalSeconds
        self.scope = scope
        self.ttlSeconds = ttlSeconds
    }

    /// The rules for an ID, which is also a store key: non-empty, bounded, printable.
    public static func validate(id: String) throws(NotificationError) {
        guard !id.isEmpty else { throw .invalidID(id, reason: "is empty") }
        guard id.utf8.count <= maxIDBytes else { throw .invalidID(id, reason: "is longer than \(maxIDBytes) bytes") }
        guard !id.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .invalidID(id, reason: "contains a control character")
        }
    }
}
