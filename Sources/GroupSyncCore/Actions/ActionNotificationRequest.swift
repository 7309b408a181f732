/// A `sendNotification` request as an action run leaves it in the app's suite (`groupsync.notification.<id>`),
/// and what the daemon does with it next. Pure: the daemon reads the request, asks `step`, does the I/O, and
/// records the outcome in the request's `status`.
///
/// The request is state, not a message: the daemon acts on it whenever it gets to it (at start-up for requests
/// written while it was down, or when `fire` hands it over), and the status it records is what keeps a
/// request from being shown twice — only `pending` is ever posted, only `removing` is ever dismissed.
public enum ActionNotificationRequest {
    /// Written by the action runner; nothing has shown it yet.
    public static let pending = "pending"
    /// Written by `removeAllDeliveredNotifications` over a delivered (or still pending) request of this device.
    public static let removing = "removing"
    /// The daemon dismissed it (or it had never been shown); final.
    public static let removed = "removed"
    /// Still pending past its time to live when a daemon got to it: too stale to show; final.
    public static let expired = "expired"
    /// Posted and on screen.
    public static let shown = "shown"
    /// Posted, held by the daemon until a notification server appears (then `shown`).
    public static let waiting = "waiting"
    /// The statuses of a request that is, or is about to be, on screen: what `removeAllDeliveredNotifications`
    /// takes down. `waiting` is held by the daemon for a notification server; `unchanged` was already shown.
    public static let delivered: Set<String> = [pending, shown, waiting, "unchanged"]

    /// What the daemon does with one request.
    public enum Step: Equatable, Sendable {
        /// Post it through the notifier exactly as `notify post` would, then record the result as the status.
        case post(NotificationRequest)
        /// Dismiss the notification of this identifier, then record `removed`.
        case dismiss
        /// Record this status without showing anything.
        case settle(String)
        /// Nothing to do: already delivered or removed.
        case leave
        /// Another device's request: its daemon shows it, and this one neither acts on it nor records anything.
        case othersRequest
    }

    /// The request's device, which only that device's daemon shows (a request replicates with its suite, and
    /// the callback fired on the device that wrote it). `nil` for a request written before the field existed.
    public static func device(of request: [String: Value]) -> String? { request["device"]?.stringValue }

    public static func status(of request: [String: Value]) -> String? { request["status"]?.stringValue }

    /// Requests in the order they were fired: by `requestedAt`, then by their place in the firing (`order`),
    /// then by key. Acted on by key alone, two notifications of one callback reached the screen sorted by their
    /// identifiers, not in the order the app listed them (found by review). What is not a request comes last.
    public static func inFiringOrder(_ entries: [Entry]) -> [Entry] {
        func rank(_ entry: Entry) -> (Double, Int64) {
            guard case .dictionary(let request)? = entry.value else { return (.infinity, 0) }
            return (request["requestedAt"]?.epochMillis ?? 0, request["order"]?.intValue ?? 0)
        }
        return entries.map { ($0, rank($0)) }.sorted { a, b in
            if a.1.0 != b.1.0 { return a.1.0 < b.1.0 }
            if a.1.1 != b.1.1 { return a.1.1 < b.1.1 }
            return (a.0.suite, a.0.key) < (b.0.suite, b.0.key)
        }.map(\.0)
    }

    /// Whether the request is another device's: its `device`, or for a request without one, who wrote it.
    public static func isOthers(_ request: [String: Value], writtenBy origin: DeviceID, device: DeviceID) -> Bool {
        !(Self.device(of: request).map { $0 == device.description } ?? (origin == device))
    }

    /// What `device`'s daemon does with a request that `origin` wrote. It is `device`'s when it names it, or, for a
    /// request from before the field existed, when `device` wrote it. A pending request older than the default
    /// time to live is not shown any more (a laptop started the next morning must not pop yesterday's callback);
    /// a younger one is posted with what is left of it, so it stops waiting for a server when a fresh post
    /// would have.
    public static func step(identifier: String, request: [String: Value], writtenBy origin: DeviceID, device: DeviceID,
                            nowMillis: Int64) -> Step {
        guard !isOthers(request, writtenBy: origin, device: device) else { return .othersRequest }
        switch status(of: request) {
        case pending?:
            let ageSeconds = request["requestedAt"]?.epochMillis.map { max(0, (Double(nowMillis) - $0) / 1000) } ?? 0
            let ttl = NotificationRequest.defaultTTLSeconds - ageSeconds
            guard ttl > 0 else { return .settle(expired) }
            do { return .post(try post(identifier: identifier, request: request, ttlSeconds: ttl)) } catch {
                return .settle("failed: \(error)")
            }
        case removing?:
            return .dismiss
        default:
            return .leave
        }
    }

    /// The post for a request: the seed payload's title (the identifier when it has none), subtitle and body as
    /// the body, `interruptionLevel` as the level (an unknown one is ignored, as the library ignores it, and the
    /// notification shown at the default level rather than not at all). Never debounced: the app debounces its
    /// own notifications, and a repeat of a fixed identifier replaces the earlier one in place.
    public static func post(identifier: String, request: [String: Value], ttlSeconds: Double = NotificationRequest.defaultTTLSeconds)
        throws(NotificationError) -> NotificationRequest {
        let body = [request["subtitle"]?.stringValue, request["body"]?.stringValue].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "\n")
        let level = request["interruptionLevel"]?.stringValue.flatMap { try? NotificationLevel(parsing: $0) } ?? .default
        let title = request["title"]?.stringValue ?? identifier
        return try NotificationRequest(id: identifier, content: NotificationContent(title: title, body: body, level: level),
                                       minIntervalSeconds: 0, scope: .local, ttlSeconds: ttlSeconds)
    }
}
