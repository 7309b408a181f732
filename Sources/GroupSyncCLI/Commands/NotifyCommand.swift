import GroupSyncCore
import GroupSyncDaemon
import GroupSyncStore

/// `groupsync notify post|dismiss|shield`: desktop notifications, served by the running daemon.
enum NotifyCommand: Command {
    static let name = "notify"
    static let summary = "post, dismiss or shield-post a fixed-ID desktop notification (through the daemon)"
    static let help = """
        usage: groupsync notify post --id ID --title TITLE [--body BODY] [--level passive|active|timeSensitive|critical]
                                     [--min-interval SECONDS] [--scope local|all] [--ttl SECONDS]
                                     [--activity NAME] [--callback NAME] [--event NAME] [--app NAME] [--json]
               groupsync notify dismiss --id ID [--json]
               groupsync notify shield --suite SUITE --config-key KEY --app NAME [--json]

        Served by the running daemon ('groupsync serve'), which shows notifications through the desktop's
        notification server (libnotify).

        post     shows TITLE/BODY under the fixed ID: a post with an ID already shown replaces it in place, also
                 after a restart. Within --min-interval seconds (default 30) of the last shown post of the same
                 ID the post is suppressed and reported (a local post still waiting for a notification server is
                 replaced instead; a --scope all post counts, as another device may have shown it). --level:
                 passive (low urgency, no sound), active (default), timeSensitive (stays until dismissed), critical.
                 --scope all shows it on every paired device; a device that comes back more than --ttl seconds
                 (default 3600) after the post does not show it.
                 {activityName}, {callbackName}, {eventName}, {applicationOrDomainDisplayName} in the text are
                 filled from --activity, --callback, --event, --app; other placeholders are left as written.
                 Filled, a title or body may have 256 KiB at most (exit 2 beyond).
        dismiss  closes the notification, on every device for --scope all posts.
        shield   posts the "shield shown" notification configured in SUITE under KEY ({payload: {title, body,
                 …}, minIntervalSeconds}), debounced by KEY + "LastSentAt" in the same suite, as the seed app does
                 (written once the notification is shown; another device's shield, another showing, holds back
                 nothing here).

        Exit codes: 0 done (shown, replaced, suppressed or waiting for a notification server: see the output),
        1 nothing posted under that ID (dismiss) or no configuration under KEY (shield), 2 bad usage or input
        (also a shield configuration of the wrong shape), 3 no daemon running, or it or the notification server
        failed (result failed: the reason is on stderr, and in the JSON with --json).

          --json          print the daemon's answer as JSON (Protocol/CONTROL.md): ok, id, result (shown,
                          closed, unchanged, suppressed, waiting, failed), reason; a suppressed post has
                          retryInSeconds instead of a reason (and a suppressed shield no id); a refusal
                          is ok false with error, plus notFound true when nothing is under the ID or key;
                          what the command refuses before asking the daemon (bad usage or input, exit 2;
                          no daemon, exit 3) is on stderr only
        \(homeHelp)
        """
    static let flags = FlagSpec.with(
        valued: ["--id", "--title", "--body", "--level", "--min-interval", "--scope", "--ttl", "--activity", "--callback", "--event", "--app", "--suite", "--config-key"],
        switches: ["--json"])

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        guard let verb = arguments.positionals.first else { throw .usage("missing post, dismiss or shield") }
        guard arguments.positionals.count == 1 else { throw .usage("unexpected argument '\(arguments.positionals[1])'") }
        let request: JSONObject
        switch verb {
        case "post": request = try postRequest(arguments)
        case "dismiss": request = try dismissRequest(arguments)
        case "shield": request = try shieldRequest(arguments)
        default: throw .usage("unknown notify command '\(verb)': use post, dismiss or shield")
        }
        let context = try DeviceContext.open(home: invocation.home(arguments))
        guard let connection = ControlConnection(home: context.home) else {
            throw .failure("no daemon is running on \(context.home.path): start 'groupsync serve' (notifications are shown by the daemon)")
        }
        // Connected but unanswered: the daemon may still carry the request out (its notification worker can be
        // held up by a notification server that is slow to answer), so do not say that nothing happened.
        guard let answer = connection.request(request.text) else {
            throw .failure("the daemon on \(context.home.path) did not answer in time; the request may still take effect (check with 'groupsync status' and the daemon's log)")
        }
        guard case .dictionary(let object)? = try? JSONParser.parse(answer) else { throw .failure("the daemon gave an unreadable answer: \(answer)") }
        if arguments.has("--json") { Console.out(answer) }
        guard object["ok"] == .bool(true) else {
            let message = if case .string(let text)? = object["error"] { text } else { answer }
            if object["notFound"] == .bool(true) { throw .notFound(message) }
            if object["badInput"] == .bool(true) { throw .badInput(message) }
            throw .failure(message)
        }
        let result = if case .string(let text)? = object["result"] { text } else { "done" }
        var line = result
        if case .string(let reason)? = object["reason"] { line += ": " + reason }
        if case .double(let seconds)? = object["retryInSeconds"] { line += ": posted too recently; posts go through again in \(Int(seconds.rounded(.up))) s" }
        // The notification server refused or broke: the environment failed (exit 3), so that a script can tell
        // it from a notification shown. The JSON answer is printed all the same.
        if result == "failed" { throw .failure(line) }
        if !arguments.has("--json") { Console.out(line) }
    }

    private static func postRequest(_ arguments: ParsedArguments) throws(CLIError) -> JSONObject {
        try only(arguments, allowed: ["--id", "--title", "--body", "--level", "--min-interval", "--scope", "--ttl", "--activity", "--callback", "--event", "--app"], verb: "post")
        guard let id = arguments.value("--id") else { throw .usage("post needs --id") }
        guard let title = arguments.value("--title") else { throw .usage("post needs --title") }
        var object = JSONObject()
        object.add("command", "notify-post")
        object.add("id", id)
        object.add("title", title)
        if let body = arguments.value("--body") { object.add("body", body) }
        do {
            let level = try arguments.value("--level").map { text throws(NotificationError) in try NotificationLevel(parsing: text) }
            let scope = try arguments.value("--scope").map { text throws(NotificationError) in try NotificationScope(parsing: text) }
            let minInterval = try seconds(arguments, "--min-interval")
            let ttl = try seconds(arguments, "--ttl")
            // Validated here too, so bad input is refused before anything reaches the daemon.
            _ = try NotificationRequest(id: id, content: NotificationContent(title: title, body: arguments.value("--body") ?? "", level: level ?? .default),
                                        minIntervalSeconds: minInterval ?? NotificationRequest.defaultMinIntervalSeconds,
                                        scope: scope ?? .default, ttlSeconds: ttl ?? NotificationRequest.defaultTTLSeconds)
            if let level { object.add("level", level.rawValue) }
            if let scope { object.add("scope", scope.rawValue) }
            if let minInterval { object.add("minInterval", .double(minInterval)) }
            if let ttl { object.add("ttl", .double(ttl)) }
        } catch let error as CLIError {
            throw error
        } catch {
            throw .badInput("\(error)")
        }
        var placeholders: [String: Value] = [:]
        for (flag, name) in [("--activity", "activityName"), ("--callback", "callbackName"), ("--event", "eventName"), ("--app", "applicationOrDomainDisplayName")] {
            if let text = arguments.value(flag) { placeholders[name] = .string(text) }
        }
        if !placeholders.isEmpty { object.add("placeholders", .dictionary(placeholders)) }
        return object
    }

    private static func dismissRequest(_ arguments: ParsedArguments) throws(CLIError) -> JSONObject {
        try only(arguments, allowed: ["--id"], verb: "dismiss")
        guard let id = arguments.value("--id") else { throw .usage("dismiss needs --id") }
        do { try NotificationRequest.validate(id: id) } catch { throw .badInput(error.description) }
        var object = JSONObject()
        object.add("command", "notify-dismiss")
        object.add("id", id)
        return object
    }

    private static func shieldRequest(_ arguments: ParsedArguments) throws(CLIError) -> JSONObject {
        try only(arguments, allowed: ["--suite", "--config-key", "--app"], verb: "shield")
        guard let suite = arguments.value("--suite"), let key = arguments.value("--config-key"), let app = arguments.value("--app") else {
            throw .usage("shield needs --suite, --config-key and --app")
        }
        do { try Store.validate(suite: suite, key: key) } catch { throw error.asCLIError }
        do { try ShieldNotificationConfig.validate(configKey: key) } catch { throw .badInput("--config-key: \(error)") }
        var object = JSONObject()
        object.add("command", "notify-shield")
        object.add("suite", suite)
        object.add("configKey", key)
        object.add("app", app)
        return object
    }

    /// Each verb takes its own flags; one meant for another verb is a usage error, not silently ignored.
    private static func only(_ arguments: ParsedArguments, allowed: Set<String>, verb: String) throws(CLIError) {
        for flag in arguments.values.keys where flag != "--home" && !allowed.contains(flag) {
            throw .usage("\(flag) does not go with 'notify \(verb)'")
        }
    }

    private static func seconds(_ arguments: ParsedArguments, _ flag: String) throws(CLIError) -> Double? {
        guard let text = arguments.value(flag) else { return nil }
        guard let seconds = DecimalNumber.parse(text), seconds >= 0 else {
            throw .badInput("\(flag) expects a number of seconds, got '\(text)'")
        }
        return seconds
    }
}
