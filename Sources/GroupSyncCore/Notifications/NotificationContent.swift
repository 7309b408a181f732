/// What a notification says and how loudly: everything a server needs to draw it.
public struct NotificationContent: Hashable, Sendable {
    /// The `summary` line.
    public var title: String
    public var body: String
    public var level: NotificationLevel

    public init(title: String, body: String = "", level: NotificationLevel = .default) {
        self.title = title
        self.body = body
        self.level = level
    }

    /// The same content with its placeholders filled; refused when that makes either too long.
    public func filling(_ placeholders: NotificationPlaceholders) throws(NotificationError) -> NotificationContent {
        NotificationContent(title: try placeholders.fill(title, field: "title"), body: try placeholders.fill(body, field: "body"), level: level)
    }
}
