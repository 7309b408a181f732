import CNotify
import GroupSyncCore
import Synchronization

/// Desktop notifications through libnotify, over the D-Bus session bus (freedesktop Desktop Notifications).
///
/// Which server instance is running comes from the bus (the unique name owning `org.freedesktop.Notifications`,
/// qualified by the bus daemon's ID): a notification number is only replaced or closed on the instance that gave it.
public final class LibnotifyNotifier: Notifier {
    public static let serverBusName = "org.freedesktop.Notifications"

    /// Bounds for the calls made here. libnotify's own `Notify`/`CloseNotification` use GLib's default
    /// (25 s) and cannot be changed from outside; the `GetServerInformation` check before each of them makes
    /// that wait happen only for a server that answered a moment ago and then hung.
    public struct Timeouts: Sendable {
        /// Calls to the bus daemon and to a running server.
        public var callMillis: Int32 = 1_000
        /// Starting an activatable server.
        public var activationMillis: Int32 = 5_000

        public init() {}
    }

    private let appName: String
    private let timeouts: Timeouts
    /// libnotify keeps global state and is not thread-safe: one call at a time.
    private let lock = Mutex<Void>(())
    /// Whether the server instance last asked reads markup in bodies (`BodyMarkup`).
    private let bodyMarkup = Mutex<(instance: String, reads: Bool)?>(nil)

    public init(appName: String = "GroupSync", timeouts: Timeouts = Timeouts()) {
        self.appName = appName
        self.timeouts = timeouts
    }

    public func availability() -> NotifierAvailability {
        lock.withLock { _ in
            do throws(NotifierError) { return .available(try currentServer()) } catch { return .unavailable(reason: error.description) }
        }
    }

    public func sessionBusReachable() -> Bool {
        lock.withLock { _ in
            do throws(NotifierError) { _ = try connect(); return true } catch { return false }
        }
    }

    public func show(_ content: NotificationContent, replacing: ServerNotification?) throws(NotifierError) -> ServerNotification {
        try lock.withLock { _ throws(NotifierError) in
            let server = try currentServer()
            // The server is asked only for a body that markup would change.
            let body = BodyMarkup.wouldChange(content.body) && readsBodyMarkup(server) ? BodyMarkup.escaped(content.body) : content.body
            return try withNotification(content.title, body) { notification throws(NotifierError) in
                if let replacing, replacing.serverInstance == server.instance {
                    gs_notification_set_id(notification, replacing.number)
                }
                apply(content.level.presentation, to: notification)
                var error: UnsafeMutablePointer<GError>?
                guard notify_notification_show(notification, &error) != 0 else {
                    throw failure(GLibError(taking: error, context: "Notify"), doing: "showing a notification on \(server.instance)")
                }
                return ServerNotification(number: gs_notification_get_id(notification), serverInstance: server.instance)
            }
        }
    }

    public func close(_ shown: ServerNotification) throws(NotifierError) -> CloseResult {
        try lock.withLock { _ throws(NotifierError) in
            let server = try currentServer()
            guard server.instance == shown.serverInstance else { return .serverChanged }
            return try withNotification("", nil) { notification throws(NotifierError) in
                gs_notification_set_id(notification, shown.number)
                var error: UnsafeMutablePointer<GError>?
                guard notify_notification_close(notification, &error) != 0 else {
                    let glibError = GLibError(taking: error, context: "CloseNotification")
                    // The spec's answer for a number the server no longer has is an error reply.
                    if glibError.remoteName != nil { return .alreadyGone }
                    throw failure(glibError, doing: "closing notification \(shown.number) on \(server.instance)")
                }
                return .closed
            }
        }
    }

    // MARK: The server

    /// The running server, activating one if the bus knows how; bounded by `timeouts`.
    private func currentServer() throws(NotifierError) -> NotificationServer {
        let bus = try connect()
        let owner: String
        do {
            owner = try bus.nameOwner(Self.serverBusName, timeoutMillis: timeouts.callMillis)
        } catch where error.remoteName == GLibError.nameHasNoOwner {
            do {
                try bus.startService(Self.serverBusName, timeoutMillis: timeouts.activationMillis)
                owner = try bus.nameOwner(Self.serverBusName, timeoutMillis: timeouts.callMillis)
            } catch {
                throw .unavailable("no notification server on the session bus: \(error)")
            }
        } catch where error.isClosedConnection {
            // The bus went away before GLib marked its connection closed: the same as a bus gone at connect.
            throw failure(error, doing: "asking for the notification server")
        } catch {
            throw .unavailable("cannot ask the session bus for the notification server: \(error)")
        }
        do {
            let info = try bus.serverInformation(at: owner, timeoutMillis: timeouts.callMillis)
            return NotificationServer(instance: "\(owner)@\(bus.guid)", name: info.name, vendor: info.vendor, version: info.version)
        } catch where error.isClosedConnection {
            throw failure(error, doing: "asking the notification server who it is")
        } catch {
            throw .unavailable("the notification server at \(owner) does not answer: \(error)")
        }
    }

    /// Whether `server` reads markup in bodies, asked once per server instance. A server that does not say is
    /// taken not to (asked again next time): its body is sent as it is.
    private func readsBodyMarkup(_ server: NotificationServer) -> Bool {
        if let known = bodyMarkup.withLock({ $0 }), known.instance == server.instance { return known.reads }
        let owner = String(server.instance.prefix { $0 != "@" })  // the unique name, before the bus's ID
        let capabilities: [String]
        do throws(NotifierError) {
            let bus = try connect()
            do { capabilities = try bus.serverCapabilities(at: owner, timeoutMillis: timeouts.callMillis) } catch { return false }
        } catch {
            return false
        }
        let reads = capabilities.contains(BodyMarkup.capability)
        bodyMarkup.withLock { $0 = (server.instance, reads) }
        return reads
    }

    /// The shared session connection. If the bus went away, GLib keeps handing out the dead connection for
    /// as long as anything holds it — libnotify's proxy, and the proxy's pending signal callbacks. Dropping
    /// libnotify's state and running those callbacks frees it, so the next attempt reaches a new bus.
    private func connect() throws(NotifierError) -> SessionBus {
        for attempt in 0..<2 {
            let bus: SessionBus
            do { bus = try SessionBus() } catch { throw .unavailable("no D-Bus session bus: \(error)") }
            guard bus.isClosed else { return bus }
            if attempt == 0 { forgetClosedBus() }
        }
        throw .unavailable("the D-Bus session bus connection is closed")
    }

    /// Only for a bus that is gone: notify_uninit also closes every notification libnotify still tracks
    /// that never expires, which on a live bus would take down the user's notifications.
    private func forgetClosedBus() {
        if notify_is_initted() != 0 { notify_uninit() }
        dispatchPendingSignals()
    }

    private func failure(_ error: GLibError, doing what: String) -> NotifierError {
        // A bus that closed mid-call: drop libnotify's proxy so the next call can reach a new bus.
        if error.isClosedConnection {
            forgetClosedBus()
            return .unavailable("the session bus went away while \(what): \(error)")
        }
        if error.remoteName == "org.freedesktop.DBus.Error.ServiceUnknown" || error.remoteName == GLibError.nameHasNoOwner {
            return .unavailable("the notification server went away while \(what): \(error)")
        }
        return .failed("\(what) failed: \(error)")
    }

    // MARK: libnotify objects

    /// A libnotify notification object for one call, released after it. libnotify identifies a notification
    /// to the server only by the object's "id", so a fresh object with the id set stands for any earlier one.
    private func withNotification<Result>(_ title: String, _ body: String?,
                                          _ use: (UnsafeMutablePointer<NotifyNotification>) throws(NotifierError) -> Result) throws(NotifierError) -> Result {
        // notify_init only records the app name; it succeeds without any bus.
        if notify_is_initted() == 0 && notify_init(appName) == 0 { throw .failed("libnotify could not be initialised") }
        dispatchPendingSignals()
        // libnotify takes C strings: a NUL in the text (a value may hold one) would cut off the rest, so it is
        // shown as U+FFFD instead.
        guard let notification = notify_notification_new(Self.cString(title), body.map(Self.cString), nil) else {
            throw .failed("libnotify could not create a notification")
        }
        defer { release(notification) }
        return try use(notification)
    }

    static func cString(_ text: String) -> String {
        text.contains("\0") ? String(text.map { $0 == "\0" ? "\u{FFFD}" : $0 }) : text
    }

    private func apply(_ presentation: NotificationPresentation, to notification: UnsafeMutablePointer<NotifyNotification>) {
        notify_notification_set_urgency(notification, NotifyUrgency(rawValue: UInt32(presentation.urgency.rawValue)))
        notify_notification_set_timeout(notification, presentation.expireTimeoutMillis)
        notify_notification_set_category(notification, presentation.category)
        if presentation.suppressSound { notify_notification_set_hint(notification, "suppress-sound", g_variant_new_boolean(1)) }
        if presentation.resident { notify_notification_set_hint(notification, "resident", g_variant_new_boolean(1)) }
    }

    private func release(_ notification: UnsafeMutablePointer<NotifyNotification>) {
        g_object_unref(UnsafeMutableRawPointer(notification))
        dispatchPendingSignals()
    }

    /// GDBus delivers bus signals through the default main context, which this process does not run.
    /// libnotify's proxy learns from NameOwnerChanged that the server restarted and sends to the new one
    /// (until then it addresses the old server's unique name, which fails); and the server's
    /// NotificationClosed signals would pile up for the life of the daemon. Running what is pending
    /// before and after each call keeps both right. It never blocks.
    private func dispatchPendingSignals() {
        while g_main_context_iteration(nil, 0) != 0 {}
    }
}
