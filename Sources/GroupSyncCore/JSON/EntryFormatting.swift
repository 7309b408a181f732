/// How entries look outside: the plain form `get` prints, and the JSON object shared by `get --json`,
/// `list --json`, `watch` and the daemon's control socket.
public enum EntryFormatting {
    /// Strings raw; numbers, bools, arrays and dictionaries as JSON; dates ISO 8601; data base64.
    public static func plain(_ value: Value) -> String {
        switch value {
        case .string(let s): s
        case .date(let seconds): ISO8601.format(secondsSince1970: seconds)
        case .data(let bytes): Base64.encode(bytes)
        default: JSONWriter.string(for: value)
        }
    }

    public static func json(_ entry: Entry, includeDeletedFlag: Bool = false) -> String {
        var object = JSONObject()
        object.add("suite", entry.suite)
        object.add("key", entry.key)
        if let value = entry.value {
            object.add("type", value.typeName)
            object.add("value", value)
        } else {
            object.addRaw("type", json: "null")
            object.addRaw("value", json: "null")
        }
        object.add("hlc", entry.version.hlc.description)
        object.add("origin", entry.version.origin.description)
        if includeDeletedFlag || entry.isDeleted { object.add("deleted", entry.isDeleted) }
        return object.text
    }
}
