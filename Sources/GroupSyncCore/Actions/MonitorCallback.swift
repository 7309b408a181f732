/// The device-activity monitor callbacks an App Group's actions are keyed by.
public enum MonitorCallback: String, CaseIterable, Sendable {
    case intervalDidStart, intervalDidEnd, eventDidReachThreshold
    case intervalWillStartWarning, intervalWillEndWarning, eventWillReachThresholdWarning

    /// Whether the callback concerns one event (and so takes an event name).
    public var takesEvent: Bool { self == .eventDidReachThreshold || self == .eventWillReachThresholdWarning }
}

/// One callback as the monitor reports it: which activity, which callback, which event (if any).
public struct CallbackInvocation: Equatable, Sendable {
    public var activity: String
    public var callback: MonitorCallback
    public var event: String?

    public init(activity: String, callback: MonitorCallback, event: String?) {
        self.activity = activity
        self.callback = callback
        self.event = event
    }

    /// `actions_for_{activity}_{callback}[_{event}]`: the actions the app stored for this callback.
    public var actionsKey: String { "actions_for_\(activity)_\(callback.rawValue)" + (event.map { "_\($0)" } ?? "") }

    /// `events_{activity}_{callback}[_{event}]`: when this callback last fired (epoch ms, a double).
    public var eventsKey: String { "events_\(activity)_\(callback.rawValue)" + (event.map { "_\($0)" } ?? "") }

    /// The `{activityName}`, `{callbackName}`, `{eventName}` placeholders of notification texts. With no
    /// event, `{eventName}` becomes its own name, as the iOS side writes it.
    public var placeholders: NotificationPlaceholders {
        NotificationPlaceholders([.activityName: activity, .callbackName: callback.rawValue, .eventName: event ?? "eventName"])
    }
}
