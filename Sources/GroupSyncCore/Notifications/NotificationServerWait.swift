/// The notifications that wait for a notification server that is not there, and when to look for one again.
/// Pure, with the time passed in: the daemon's notification worker keeps one and asks it how long to sleep.
///
/// A headless box, or a service started before the desktop, may never get a server, so waiting must never
/// become a timer that runs for good:
/// - A post that still has to be shown waits (`NotificationPlanner.planWithoutServer` says `.show`), and so
///   does a dismissal of one still on a server's screen: that server may only have been slow to answer.
///   A post already shown, or dismissed before it was shown, needs no server; one no longer on screen only has
///   its display state tidied by its next replan (a change to its record, a restart).
/// - Either waits until the post's time to live runs out, no longer.
/// - The daemon looks again on a timer only while a session bus is there, on which a server can start at any
///   moment (the desktop coming up). Without a bus it looks again only on activity — a write, a replicated
///   change, a request — and at start-up: a bus that appears later is found then, never by polling.
public struct NotificationServerWait: Hashable, Sendable {
    /// How long to wait before looking for a missing server again, while a post waits and a bus is there.
    public static let retryMillis: Int64 = 30_000
    /// Activity on the machine (a write, a replicated change) is also a chance to find a server that appeared,
    /// but at most this often, so a busy machine without one does not ask the bus at every write.
    public static let retryOnActivityMillis: Int64 = 2_000

    /// Whether activity at `nowMillis` looks for a server again, the last look having been at `lastLookMillis`.
    public func looksAgainOnActivity(nowMillis: Int64, lastLookMillis: Int64) -> Bool {
        !isEmpty && nowMillis - lastLookMillis >= Self.retryOnActivityMillis
    }

    /// ID → when its post expires: the moment it stops waiting.
    public private(set) var expiries: [String: Int64] = [:]

    public init() {}

    public var isEmpty: Bool { expiries.isEmpty }
    /// The waiting IDs, in a stable order.
    public var ids: [String] { expiries.keys.sorted() }

    /// Until when `id` waits for a server, or `nil` if it needs none now, on this device's clock.
    /// `originClockOffsetMillis`: the posting device's clock minus this one's, when known: the TTL runs on the
    /// poster's clock (`NotificationPlanner`), so its end is moved onto this one's.
    public static func deadline(record: NotificationRecord?, display: NotificationDisplay?, device: DeviceID,
                                nowMillis: Int64, originClockOffsetMillis: Int64 = 0) -> Int64? {
        let plan = NotificationPlanner.planWithoutServer(record: record, display: display, device: device, nowMillis: nowMillis,
                                                         originClockOffsetMillis: originClockOffsetMillis)
        guard let record else { return nil }
        let expiresHere = record.expiresAtMillis.subtractingReportingOverflow(originClockOffsetMillis).partialValue
        if case .show = plan.action { return expiresHere }
        // Dismissed while on a server's screen: that server may only have been slow to answer (a desktop shell
        // that stalls a moment), not gone, and then the notification is still up. Try closing it again, as long
        // as the post would have been current.
        if record.isDismissed, display?.onScreen != nil, nowMillis < expiresHere { return expiresHere }
        return nil
    }

    /// Presenting `id` found no server: it waits if its post still has to be shown, and stops waiting otherwise.
    public mutating func noServer(for id: String, record: NotificationRecord?, display: NotificationDisplay?,
                                  device: DeviceID, nowMillis: Int64, originClockOffsetMillis: Int64 = 0) {
        expiries[id] = Self.deadline(record: record, display: display, device: device, nowMillis: nowMillis,
                                     originClockOffsetMillis: originClockOffsetMillis)
    }

    /// `id` was presented (or the server refused it): it no longer waits.
    public mutating func presented(_ id: String) {
        expiries[id] = nil
    }

    /// Drops the posts whose time to live ran out: they would not be shown any more.
    public mutating func dropExpired(nowMillis: Int64) {
        expiries = expiries.filter { nowMillis < $0.value }
    }

    /// When to look for a server again on a timer, or `nil` for no timer: nothing waits, or there is no session
    /// bus. Never later than the first expiry, so an expired post stops the timer on time.
    public func nextRetryMillis(lastAttemptMillis: Int64, sessionBus: Bool) -> Int64? {
        guard sessionBus, let first = expiries.values.min() else { return nil }
        return min(lastAttemptMillis + Self.retryMillis, first)
    }
}
