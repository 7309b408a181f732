import GroupSyncCore
import GroupSyncDaemon
import GroupSyncStore

/// Hands the `sendNotification` requests an action run wrote (`groupsync.notification.<id>` in the app's
/// suite, with the seed's payload fields) to the daemon's notifier, and records what became of each in the
/// request's `status`: shown, suppressed, waiting — or pending when no daemon runs, so nothing is lost.
enum ActionNotificationDelivery {
    static func deliver(_ identifiers: [String], suite: String, context: DeviceContext) -> [String: String] {
        var results: [String: String] = [:]
        for identifier in identifiers {
            let key = AppGroupState.notificationKey(identifier)
            guard case .dictionary(var request)? = try? context.store.entry(suite: suite, key: key)?.value else { continue }
            var post = JSONObject()
            post.add("command", "notify-post")
            post.add("id", identifier)
            post.add("title", text(request["title"]) ?? identifier)
            let body = [text(request["subtitle"]), text(request["body"])].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "\n")
            if !body.isEmpty { post.add("body", body) }
            if let level = text(request["interruptionLevel"]) { post.add("level", level) }
            // The seed's shield/usage notifications are debounced by the app itself; a fixed ID replaces in place.
            post.add("minInterval", .int(0))
            let status: String
            if let answer = ControlClient.request(home: context.home, post.text), case .dictionary(let object)? = try? JSONParser.parse(answer) {
                status = text(object["result"]) ?? (text(object["error"]).map { "failed: " + $0 } ?? "failed")
            } else {
                status = "pending"
            }
            results[identifier] = status
            guard status != "pending" else { continue }
            request["status"] = .string(status)
            _ = try? context.store.set(.dictionary(request), suite: suite, key: key)
        }
        return results
    }

    private static func text(_ value: Value?) -> String? {
        if case .string(let text)? = value { return text }
        return nil
    }
}
