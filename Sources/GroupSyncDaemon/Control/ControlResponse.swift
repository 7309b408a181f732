import GroupSyncCore

/// The shapes of the control socket's answers.
enum ControlResponse {
    /// `notFound`: what the request names is not there (the CLI exits 1). `badInput`: what the request names
    /// holds data of the wrong shape (the CLI exits 2). Neither: the daemon or its store failed (exit 3).
    static func error(_ message: String, notFound: Bool = false, badInput: Bool = false) -> String {
        var object = JSONObject()
        object.add("ok", false)
        if notFound { object.add("notFound", true) }
        if badInput { object.add("badInput", true) }
        object.add("error", message)
        return object.text
    }

    static func written(_ change: Change) -> String {
        var object = JSONObject()
        object.add("ok", true)
        object.add("sequence", .int(change.sequence))
        object.add("hlc", change.entry.version.hlc.description)
        return object.text
    }
}
