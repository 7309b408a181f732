/// Reads the fields of a stored dictionary (a record, a display state, a shield configuration) and names the
/// stored place in every error, so a hand-edited or damaged entry is reported where it can be fixed.
struct StoredFields {
    let fields: [String: Value]
    let describe: (String) -> NotificationError

    init(_ value: Value, describe: @escaping (String) -> NotificationError) throws(NotificationError) {
        guard case .dictionary(let fields) = value else { throw describe("expected a dictionary, found \(value.typeName)") }
        self.fields = fields
        self.describe = describe
    }

    init(_ value: Value, suite: String, key: String) throws(NotificationError) {
        try self.init(value) { .malformedRecord(suite: suite, key: key, reason: $0) }
    }

    func has(_ name: String) -> Bool { fields[name] != nil }

    func string(_ name: String) throws(NotificationError) -> String {
        guard let value = fields[name] else { throw describe("'\(name)' is missing") }
        guard case .string(let s) = value else { throw describe("'\(name)' should be a string, found \(value.typeName)") }
        return s
    }

    func optionalString(_ name: String) throws(NotificationError) -> String? {
        has(name) ? try string(name) : nil
    }

    func bool(_ name: String) throws(NotificationError) -> Bool {
        guard let value = fields[name] else { throw describe("'\(name)' is missing") }
        guard case .bool(let b) = value else { throw describe("'\(name)' should be a bool, found \(value.typeName)") }
        return b
    }

    func int(_ name: String) throws(NotificationError) -> Int64 {
        guard let value = fields[name] else { throw describe("'\(name)' is missing") }
        guard case .int(let i) = value else { throw describe("'\(name)' should be an int, found \(value.typeName)") }
        return i
    }

    /// A number of seconds; JSON written by hand gives `30` (int) as readily as `30.0`, so both are accepted.
    func seconds(_ name: String) throws(NotificationError) -> Double {
        guard let value = fields[name] else { throw describe("'\(name)' is missing") }
        switch value {
        case .double(let d): return d
        case .int(let i): return Double(i)
        default: throw describe("'\(name)' should be a number of seconds, found \(value.typeName)")
        }
    }

    func optionalSeconds(_ name: String) throws(NotificationError) -> Double? {
        has(name) ? try seconds(name) : nil
    }

    /// A `.date`, read back as epoch milliseconds.
    func millis(_ name: String) throws(NotificationError) -> Int64 {
        guard let value = fields[name] else { throw describe("'\(name)' is missing") }
        guard case .date(let seconds) = value, let millis = EpochMillis.from(seconds: seconds) else {
            throw describe("'\(name)' should be a date, found \(value.typeName)")
        }
        return millis
    }

    func deviceID(_ name: String) throws(NotificationError) -> DeviceID {
        let text = try string(name)
        do { return try DeviceID(parsing: text) } catch { throw describe("'\(name)': \(error)") }
    }
}

/// Times are epoch milliseconds in the core, and `.date` (seconds) in the store, where `groupsync get` prints
/// them as ISO 8601. Milliseconds of this era survive the trip exactly: a double near 2·10⁹ s resolves ~0.2 µs.
enum EpochMillis {
    static func date(_ millis: Int64) -> Value { .date(Double(millis) / 1000) }

    static func from(seconds: Double) -> Int64? {
        let millis = (seconds * 1000).rounded()
        guard millis.isFinite, millis.magnitude < 9.0e15 else { return nil }
        return Int64(millis)
    }
}
