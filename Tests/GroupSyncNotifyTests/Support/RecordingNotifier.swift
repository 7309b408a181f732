import GroupSyncCore
import GroupSyncNotify
import Synchronization

/// An in-memory notification server for tests of the layers above `Notifier`: it numbers notifications from 1
/// per server instance, as real servers do, and records every call.
final class RecordingNotifier: Notifier {
    public enum Call: Hashable, Sendable {
        case show(NotificationContent, replacesNumber: UInt32, returned: UInt32, instance: String)
        case close(number: UInt32, instance: String)
    }

    private struct State {
        var running = true
        var instanceCounter = 1
        var nextNumber: UInt32 = 1
        var onScreen: [UInt32: NotificationContent] = [:]
        var calls: [Call] = []
        var instance: String { ":fake.\(instanceCounter)" }
    }

    private let state = Mutex(State())

    public init() {}

    /// Every `show` and `close` that reached the server, in order.
    public var calls: [Call] { state.withLock { $0.calls } }
    /// What the server shows now, by number.
    public var onScreen: [UInt32: NotificationContent] { state.withLock { $0.onScreen } }
    public var instance: String { state.withLock { $0.instance } }

    /// The server stops: its notifications go with it.
    public func stopServer() {
        state.withLock { $0.running = false; $0.onScreen = [:] }
    }

    /// A new server instance starts, numbering from 1 again.
    public func startServer() {
        state.withLock { state in
            if state.running { state.onScreen = [:] }
            state.running = true
            state.instanceCounter += 1
            state.nextNumber = 1
        }
    }

    /// The user closes a notification on screen.
    public func userCloses(_ number: UInt32) {
        state.withLock { _ = $0.onScreen.removeValue(forKey: number) }
    }

    public func availability() -> NotifierAvailability {
        state.withLock { state in
            state.running ? .available(NotificationServer(instance: state.instance, name: "recording", vendor: "GroupSync tests", version: "1"))
                          : .unavailable(reason: "no notification server (recording notifier stopped)")
        }
    }

    public func show(_ content: NotificationContent, replacing: ServerNotification?) throws(NotifierError) -> ServerNotification {
        try state.withLock { state throws(NotifierError) in
            guard state.running else { throw NotifierError.unavailable("no notification server (recording notifier stopped)") }
            let replaces = replacing.flatMap { $0.serverInstance == state.instance ? $0.number : nil } ?? 0
            // Like the spec: replacing a number hands the same number back.
            let number: UInt32
            if replaces != 0 {
                number = replaces
            } else {
                number = state.nextNumber
                state.nextNumber += 1
            }
            state.onScreen[number] = content
            state.calls.append(.show(content, replacesNumber: replaces, returned: number, instance: state.instance))
            return ServerNotification(number: number, serverInstance: state.instance)
        }
    }

    public func close(_ shown: ServerNotification) throws(NotifierError) -> CloseResult {
        try state.withLock { state throws(NotifierError) in
            guard state.running else { throw NotifierError.unavailable("no notification server (recording notifier stopped)") }
            guard shown.serverInstance == state.instance else { return .serverChanged }
            state.calls.append(.close(number: shown.number, instance: state.instance))
            return state.onScreen.removeValue(forKey: shown.number) == nil ? .alreadyGone : .closed
        }
    }
}
