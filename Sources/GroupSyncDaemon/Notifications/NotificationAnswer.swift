import GroupSyncCore

/// What a notification command came to, as a value: the daemon's own callers (settling an action request,
/// stamping the shield's debounce) read it as such, and the control socket gets it as JSON (`json`, the
/// fields CONTROL.md lists). Before, those callers parsed the JSON answer back.
enum NotificationAnswer {
    /// The request was taken; `result` is what became of it on this device's screen.
    case done(id: String?, result: Result, reason: String? = nil, retryInSeconds: Double? = nil)
    /// It was not: why, and whether it named something missing or data of the wrong shape
    /// (`ControlResponse.error`, whose flags the CLI turns into exit codes 1 and 2).
    case refused(String, notFound: Bool = false, badInput: Bool = false)

    enum Result: String {
        case shown, closed, unchanged, waiting, suppressed, failed
    }

    var json: String {
        switch self {
        case .done(let id, let result, let reason, let retryInSeconds):
            var object = JSONObject()
            object.add("ok", true)
            if let id { object.add("id", id) }
            object.add("result", result.rawValue)
            if let reason { object.add("reason", reason) }
            if let retryInSeconds { object.add("retryInSeconds", .double(retryInSeconds)) }
            return object.text
        case .refused(let message, let notFound, let badInput):
            return ControlResponse.error(message, notFound: notFound, badInput: badInput)
        }
    }

    /// The `status` an action request is left with once posted: the result (shown, waiting, suppressed,
    /// unchanged), or `failed: ` and why.
    var postedStatus: String {
        switch self {
        case .done(_, .failed, let reason, _): return "failed: " + (reason ?? "the notifier failed")
        case .done(_, let result, _, _): return result.rawValue
        case .refused(let message, _, _): return "failed: " + message
        }
    }

    /// The `status` a removal request is left with once dismissed: `removed` whether it was closed or was on
    /// no screen here (no server, or never posted because it was still pending), else `failed: ` and why.
    var dismissedStatus: String {
        switch self {
        case .done, .refused(_, notFound: true, _): return ActionNotificationRequest.removed
        case .refused(let message, _, _): return "failed: " + message
        }
    }
}
