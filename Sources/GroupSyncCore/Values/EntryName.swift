/// What a suite or key name may be: the store's rule, here so that the core's planners (the action runner
/// naming a block key after a selection ID) can tell an action it cannot carry out before the store refuses
/// the whole callback.
public enum EntryName {
    public static let maxBytes = 1024

    /// Why `name` cannot name a suite or key (`what`: "suite" or "key"); nil when it can.
    public static func problem(_ name: String, what: String) -> String? {
        if name.isEmpty { return "the \(what) name is empty" }
        if name.utf8.count > maxBytes { return "the \(what) name is longer than \(maxBytes) bytes" }
        // Byte by byte: in UTF-8 a byte below 0x80 is always a whole scalar, so this finds exactly the
        // control scalars, without decoding every name of a 100k-entry catch-up into scalars.
        if name.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return "the \(what) name contains a control character" }
        return nil
    }

    /// Whether `name` starts with `prefix`, compared as bytes, as the store compares names. As characters
    /// (`String.hasPrefix`) a prefix fails when a combining mark follows it ("events_" then U+0301), and
    /// matches a name whose bytes differ but read the same (an activity "café" composed, a key with "café"
    /// decomposed): two keys the store keeps apart would be taken for one another.
    public static func starts(_ name: String, with prefix: String) -> Bool {
        name.utf8.starts(with: prefix.utf8)
    }

    /// What follows `prefix` in `name`, compared as bytes; nil when `name` does not start with it.
    public static func remainder(of name: String, after prefix: String) -> String? {
        guard starts(name, with: prefix) else { return nil }
        return String(decoding: name.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
    }
}
