import GroupSyncCore

/// The control socket's notification commands, turned into calls on the notification service.
///
/// `notify-post`: `id`, `title`, and optionally `body`, `level`, `minInterval`, `scope`, `ttl` (seconds), plus
/// `placeholders` (an object of `activityName`, `callbackName`, `eventName`, `applicationOrDomainDisplayName`).
/// `notify-dismiss`: `id`. `notify-shield`: `suite`, `configKey`, `app`. `notify-actions`: `suite`, whose
/// `sendNotification` requests and removals (left by `fire`) are acted on; answered with `requests`, each of
/// this device's request identifiers with its status afterwards.
/// `notify-actions` may also carry `handedOver`: the requests the run wrote, by identifier (one another device's
/// request replaced meanwhile is shown from here all the same).
enum NotificationRequests {
    static func handle(_ command: String, _ request: [String: Value], _ service: NotificationService) -> String {
        do {
            switch command {
            case "notify-post":
                let post = try parsePost(request)
                return service.onWorker { $0.post(post).json }
            case "notify-actions":
                let suite = try name(request, "suite", what: "suite")
                let handedOver = try handedOverRequests(request)
                return service.onWorker { $0.settleActionRequests(suite: suite, handedOver: handedOver) }
            case "notify-dismiss":
                let id = try string(request, "id")
                try NotificationRequest.validate(id: id)
                return service.onWorker { $0.dismiss(id: id).json }
            default:
                let suite = try name(request, "suite", what: "suite"), configKey = try name(request, "configKey", what: "key")
                try ShieldNotificationConfig.validate(configKey: configKey)
                let app = try string(request, "app")
                return service.onWorker { $0.shield(suite: suite, configKey: configKey, app: app).json }
            }
        } catch {
            // Only the request's own fields are read here: whatever is wrong is in the request.
            return ControlResponse.error("\(error)", badInput: true)
        }
    }

    /// `notify-actions`' optional `handedOver`: an object of identifier → the request the run wrote (an object).
    private static func handedOverRequests(_ request: [String: Value]) throws -> [String: [String: Value]] {
        switch request["handedOver"] {
        case nil: return [:]
        case .dictionary(let given)?:
            return try given.mapValues { value in
                guard case .dictionary(let fields) = value else { throw TypedJSONError("handedOver: each request must be an object") }
                return fields
            }
        default: throw TypedJSONError("handedOver must be an object of requests by identifier")
        }
    }

    private static func parsePost(_ request: [String: Value]) throws -> NotificationRequest {
        var placeholders = NotificationPlaceholders()
        switch request["placeholders"] {
        case nil: break
        case .dictionary(let given)?:
            for (name, value) in given.sorted(by: { $0.key < $1.key }) {
                guard let known = NotificationPlaceholders.Name(rawValue: name) else {
                    throw TypedJSONError("unknown placeholder '\(name)' (activityName, callbackName, eventName, applicationOrDomainDisplayName)")
                }
                guard case .string(let text) = value else { throw TypedJSONError("placeholder '\(name)' must be a string") }
                placeholders.values[known] = text
            }
        default:
            // A mistyped field is refused (CONTROL.md), not taken as no placeholders (found by audit).
            throw TypedJSONError("placeholders must be an object of strings, such as {\"activityName\":\"Focus\"}")
        }
        let content = NotificationContent(title: try string(request, "title"), body: try optionalString(request, "body") ?? "",
                                          level: try optionalString(request, "level").map { text throws in try NotificationLevel(parsing: text) } ?? .default)
        return try NotificationRequest(
            id: try string(request, "id"), content: try content.filling(placeholders),
            minIntervalSeconds: try seconds(request, "minInterval") ?? NotificationRequest.defaultMinIntervalSeconds,
            scope: try optionalString(request, "scope").map { text throws in try NotificationScope(parsing: text) } ?? .default,
            ttlSeconds: try seconds(request, "ttl") ?? NotificationRequest.defaultTTLSeconds)
    }

    /// A suite or key name, refused as the store refuses it (as `get` and `notify shield` on the command line
    /// do), so that a typo is the client's mistake (`badInput`) and not an empty suite (found by review).
    private static func name(_ request: [String: Value], _ field: String, what: String) throws -> String {
        let text = try string(request, field)
        if let problem = EntryName.problem(text, what: what) { throw TypedJSONError(problem) }
        return text
    }

    private static func string(_ request: [String: Value], _ field: String) throws -> String {
        guard let text = try optionalString(request, field) else { throw TypedJSONError("give \(field) as a string") }
        return text
    }

    private static func optionalString(_ request: [String: Value], _ field: String) throws -> String? {
        switch request[field] {
        case nil: return nil
        case .string(let text)?: return text
        default: throw TypedJSONError("\(field) must be a string")
        }
    }

    private static func seconds(_ request: [String: Value], _ field: String) throws -> Double? {
        switch request[field] {
        case nil: return nil
        case .int(let n)?: return Double(n)
        case .double(let d)?: return d
        default: throw TypedJSONError("\(field) must be a number of seconds")
        }
    }
}
