import GroupSyncCore

/// A desktop notification backend: libnotify on a real desktop, `RecordingNotifier` in tests.
///
/// Every call is bounded in time and none crashes without a bus or server: a headless box or a daemon started
/// before the desktop gets `unavailable`, keeps its state, and tries again later.
public protocol Notifier: Sendable {
    /// Whether a notification server can be reached now, and which instance it is. May D-Bus-activate an
    /// activatable server (dunst on a minimal desktop), so ask when there is something to show, not on a timer.
    func availability() -> NotifierAvailability

    /// Shows `content`. `replacing` is replaced in place only if it belongs to the server instance running now;
    /// otherwise the notification is posted fresh, because a restarted server gives our old numbers to other apps.
    func show(_ content: NotificationContent, replacing: ServerNotification?) throws(NotifierError) -> ServerNotification

    /// Closes a notification this device showed, unless the server instance that numbered it is gone.
    func close(_ notification: ServerNotification) throws(NotifierError) -> CloseResult

    /// Whether a session bus can be reached at all, whether or not a server is on it. Without one there is
    /// nothing to look for on a timer: a server can only appear once a bus does.
    func sessionBusReachable() -> Bool
}

extension Notifier {
    /// A backend without a bus (the recording notifier) stands for one that always has one.
    public func sessionBusReachable() -> Bool { true }
}

/// The notification server that owns `org.freedesktop.Notifications` on the session bus right now.
public struct NotificationServer: Hashable, Sendable, CustomStringConvertible {
    /// The unique bus name (`:1.42`): it changes whenever the server restarts, and the bus never reuses it.
    public var instance: String
    public var name: String
    public var vendor: String
    public var version: String

    public init(instance: String, name: String, vendor: String, version: String) {
        self.instance = instance
        self.name = name
        self.vendor = vendor
        self.version = version
    }

    public var description: String { "\(name) \(version) (\(vendor)) at \(instance)" }
}

public enum NotifierAvailability: Hashable, Sendable {
    case available(NotificationServer)
    case unavailable(reason: String)
}

public enum CloseResult: Hashable, Sendable {
    case closed
    /// The server answered that it has no such notification: the user or a timeout closed it already.
    case alreadyGone
    /// The server that numbered it is gone, and its notifications with it. The number was left alone: on the
    /// server running now it may be another app's.
    case serverChanged
}

public enum NotifierError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No session bus, or no notification server on it. Keep the state; it can be shown when one appears.
    case unavailable(String)
    /// The server or the bus refused the call.
    case failed(String)

    public var description: String {
        switch self {
        case .unavailable(let reason): reason
        case .failed(let reason): reason
        }
    }
}
