/// Activity and event names as the App Group's keys carry them.
///
/// The library behind the seed app stores fired events under `events_{activity}_{callback}_{event}` and
/// reads them back by splitting on `_`: an event named `used_7` comes back as `used`, matches nothing,
/// and the balance never goes down (seed, section 5). So a name with an underscore is refused with a
/// message, never silently rewritten, and so is an empty one.
public enum ActivityNames {
    public static let maxBytes = 200

    /// Why `name` cannot be used as an activity (or event, per `what`) name, or `nil` if it can.
    public static func problem(with name: String, what: String) -> String? {
        if name.isEmpty { return "the \(what) name is empty" }
        if name.contains("_") {
            return "the \(what) name '\(name)' contains '_': fired events are stored under keys split on '_', so it would never match (use '-' instead)"
        }
        if name.utf8.count > maxBytes { return "the \(what) name is longer than \(maxBytes) bytes" }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) { return "the \(what) name contains a control character" }
        return nil
    }
}

/// A usage threshold event name: `used-N`, N minutes of use, e.g. `used-0.25` (15 s) or `used-7`.
/// Quarter minutes are exact in binary floating point, so `used-0.25` round-trips through the number.
public struct UsageThresholdName: Equatable, Sendable {
    public let name: String
    public let usedMs: Int64

    public static let prefix = "used-"
    /// What a threshold can mean: above 0, at most 1500 minutes (a 25-hour day).
    public static let usedMsRange: ClosedRange<Int64> = 1...(1500 * 60_000)

    public init(parsing name: String) throws(UsageError) {
        if let problem = ActivityNames.problem(with: name, what: "event") { throw .badName(problem) }
        guard name.hasPrefix(Self.prefix), let minutes = Self.minutes(String(name.dropFirst(Self.prefix.count))) else {
            throw .badName("the event '\(name)' is not a usage threshold: expected used-N with N in minutes, such as used-0.25 or used-7")
        }
        guard minutes > 0, minutes <= 1500 else { throw .badName("the threshold in '\(name)' must be above 0 and at most 1500 minutes") }
        self.name = name
        self.usedMs = Int64((minutes * 60_000).rounded())
    }

    /// A plain decimal number (no sign, exponent, `inf` or `nan`).
    private static func minutes(_ text: String) -> Double? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              text.filter({ $0 == "." }).count <= 1, text.first != ".", text.last != "." else { return nil }
        return Double(text)
    }
}

public enum UsageError: Error, Equatable, CustomStringConvertible {
    case badName(String)

    public var description: String {
        switch self {
        case .badName(let text): text
        }
    }
}
