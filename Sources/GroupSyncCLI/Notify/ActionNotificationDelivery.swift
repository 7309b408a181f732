import GroupSyncCore
import GroupSyncDaemon
import GroupSyncStore

/// Hands the `sendNotification` requests and removals an action run wrote (`groupsync.notification.<id>` in the
/// app's suite) to the daemon, which shows or dismisses them and records the outcome in each request's `status`
/// (`ActionNotificationRequest`). The daemon does the deciding and the writing, on its notification thread, so a
/// request that a starting daemon finds on its own is never shown a second time through this path.
///
/// With no daemon the requests stay as the run left them, `pending` or `removing`, and the daemon acts on them
/// when it starts: each identifier is then answered with that status.
enum ActionNotificationDelivery {
    /// `daemonAnswered`: a daemon took the requests (a status it did not report is then one another callback's
    /// rewrite of the request left as it was, not a sign that no daemon runs).
    ///
    /// `written`: the requests the run wrote, by identifier, handed over with the suite: one that another
    /// device's request has replaced by the time the daemon looks is still shown here.
    static func deliver(_ identifiers: [String], suite: String, written: [String: Value], context: DeviceContext)
        -> (statuses: [String: String], daemonAnswered: Bool) {
        guard !identifiers.isEmpty else { return ([:], false) }
        var request = JSONObject()
        request.add("command", "notify-actions")
        request.add("suite", suite)
        if !written.isEmpty { request.add("handedOver", .dictionary(written)) }
        var statuses: [String: String] = [:]
        var daemonAnswered = false
        if let answer = ControlClient.request(home: context.home, request.text), case .dictionary(let object)? = try? JSONParser.parse(answer),
           case .dictionary(let requests)? = object["requests"] {
            daemonAnswered = true
            for identifier in identifiers {
                if case .string(let status)? = requests[identifier] { statuses[identifier] = status }
            }
        }
        // No daemon, or one that could not act: the status stored in the request is the truth, and the next
        // daemon to start acts on it.
        for identifier in identifiers where statuses[identifier] == nil {
            let stored = try? context.store.entry(suite: suite, key: AppGroupState.notificationKey(identifier))?.value
            if case .dictionary(let fields)? = stored, let status = ActionNotificationRequest.status(of: fields) {
                statuses[identifier] = status
            }
        }
        return (statuses, daemonAnswered)
    }

    /// Takes `identifiers` off this device's screen only, through its daemon (`notify-dismiss`): requests
    /// another device now holds (`ActionPlan.dismissalsHereOnly`), which this device's daemon may still show
    /// from its own firing. Answers each with what happened here.
    static func dismissHere(_ identifiers: [String], context: DeviceContext) -> [String: String] {
        var statuses: [String: String] = [:]
        // Asked of the daemon lock once, at the first request no daemon answers.
        var unanswered: UnansweredDaemon?
        for identifier in identifiers {
            var request = JSONObject()
            request.add("command", "notify-dismiss")
            request.add("id", identifier)
            guard let answer = ControlClient.request(home: context.home, request.text),
                  case .dictionary(let object)? = try? JSONParser.parse(answer) else {
                let why = unanswered ?? UnansweredDaemon(home: context.home)
                unanswered = why
                statuses[identifier] = "not dismissed here: " + why.reason
                continue
            }
            if object["ok"] == .bool(true) {
                statuses[identifier] = "dismissed on this device"
            } else if object["notFound"] == .bool(true) {
                statuses[identifier] = "not shown on this device"
            } else if case .string(let error)? = object["error"] {
                statuses[identifier] = "not dismissed here: " + error
            } else {
                statuses[identifier] = "not dismissed here: the daemon failed"
            }
        }
        return statuses
    }
}
