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

    /// Whether every double and date inside is finite: NaN and infinities have no JSON form and NaN
    /// breaks equality, so the store refuses them at the door.
    public var isStorable: Bool {
        switch self {
        case .double(let d), .date(let d): d.isFinite
        case .array(let items): items.allSatisfy(\.isStorable)
        case .dictionary(let dict): dict.values.allSatisfy(\.isStorable)
        default: true
        }
    }
}
