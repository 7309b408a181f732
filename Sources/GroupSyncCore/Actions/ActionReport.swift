/// What became of one stored action when its callback fired.
public struct ActionReport: Equatable, Sendable {
    public enum Outcome: String, Sendable {
        /// It ran: its effect is in the suite.
        case done
        /// A guard held it back.
        case skipped
        /// GroupSync does not perform this type (yet): reported, never silently dropped.
        case unsupported
        /// The action is malformed (no type, a missing field, an unknown selection).
        case invalid
    }

    public var index: Int
    public var type: String
    public var outcome: Outcome
    public var detail: String

    public init(index: Int, type: String, outcome: Outcome, detail: String) {
        self.index = index
        self.type = type
        self.outcome = outcome
        self.detail = detail
    }
}

/// Everything one callback does: the reports, the suite changes to make, and the notifications it
/// asked for or asked to take down (recorded in their requests for the daemon to act on).
public struct ActionPlan: Equatable, Sendable {
    public var invocation: CallbackInvocation
    public var firedAt: Double
    /// `nil` when no actions are stored for the callback; a message when the stored value is not a list.
    public var actionsProblem: String?
    public var actionCount: Int
    public var reports: [ActionReport] = []
    public var changes: [String: SuiteChange] = [:]
    /// Identifiers of the notifications requested, in order.
    public var notifications: [String] = []
    /// Identifiers of the delivered notifications `removeAllDeliveredNotifications` marked for dismissal.
    public var removals: [String] = []
    /// Identifiers whose request another device now holds (it fired the same fixed identifier after this one
    /// did) and which this device may still show from its own firing: `removeAllDeliveredNotifications`
    /// takes them off this device's screen only (`notify-dismiss` to its daemon), leaving the request alone.
    public var dismissalsHereOnly: [String] = []
}
