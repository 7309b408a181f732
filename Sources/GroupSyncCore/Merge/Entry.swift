/// One key of one suite as replicas hold it: the value (or a tombstone) and the version that wrote it.
/// A delete is a tombstone, never a removed row: a removed row could not tell a late-arriving old write
/// that it lost, and the key would come back.
public struct Entry: Hashable, Sendable {
    public var suite: String
    public var key: String
    /// `nil` is a tombstone.
    public var value: Value?
    public var version: Version

    public init(suite: String, key: String, value: Value?, version: Version) {
        self.suite = suite
        self.key = key
        self.value = value
        self.version = version
    }

    public var isDeleted: Bool { value == nil }
}

extension Sequence<Entry> {
    /// The live values by key: one suite's entries as the planners that read a whole suite take them.
    public var liveValuesByKey: [String: Value] {
        var values: [String: Value] = [:]
        for entry in self { if let value = entry.value { values[entry.key] = value } }
        return values
    }
}
