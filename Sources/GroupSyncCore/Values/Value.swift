/// A value stored under a key, with the types an App Group (`UserDefaults`) holds.
///
/// Integers and doubles are distinct cases on purpose: `7.0` written as a double must come back as a
/// double, and `0.25` must come back bit-for-bit (event names such as `used-0.25` round-trip through it).
public indirect enum Value: Hashable, Sendable {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    /// Seconds since 1970-01-01T00:00:00Z.
    case date(Double)
    case data([UInt8])
    case array([Value])
    case dictionary([String: Value])

    /// The type's name as the CLI and the JSON output spell it.
    public var typeName: String {
        switch self {
        case .string: "string"
        case .int: "int"
        case .double: "double"
        case .bool: "bool"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dictionary"
        }
    }

    /// Whether every double inside is finite and every date a finite instant of years 0000–9999: NaN and
    /// infinities have no JSON form and NaN breaks equality, and a date prints with four year digits, so the
    /// store refuses the others at the door.
    public var isStorable: Bool {
        switch self {
        case .double(let d): d.isFinite
        // A date prints as ISO 8601 with a four-digit year; one outside it could not be written back.
        // Judged at the millisecond `ISO8601.format` prints: 9999-12-31T23:59:59.9996Z would print as year 10000.
        case .date(let d): ISO8601.representableSeconds.contains(ISO8601.toMillisecond(d))
        case .array(let items): items.allSatisfy(\.isStorable)
        case .dictionary(let dict): dict.values.allSatisfy(\.isStorable)
        default: true
        }
    }
}
