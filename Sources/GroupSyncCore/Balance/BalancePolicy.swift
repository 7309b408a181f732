/// The rules of the balance, shared by all devices (last writer wins per field).
///
/// Defaults: no daily allowance until one is set (a device draws its share of the day's allowance
/// when it first uses it, and a raise counts at once while a cut only reaches what is not drawn yet,
/// so starting from zero makes the first policy take effect the same day), +5 minutes per solved
/// puzzle, at most 5 puzzles a day (Scroll Brake's numbers). Days are counted in `timeZone` (an IANA
/// name or a POSIX TZ rule), the same on every device, so every device files a spend under the same day.
public struct BalancePolicy: Equatable, Sendable {
    public var dailyBaseMs: Int64
    public var extensionMs: Int64
    public var maxExtensions: Int64
    public var timeZone: String

    public static let standard = BalancePolicy(dailyBaseMs: 0, extensionMs: 5 * 60_000, maxExtensions: 5, timeZone: "UTC")

    public init(dailyBaseMs: Int64, extensionMs: Int64, maxExtensions: Int64, timeZone: String) {
        self.dailyBaseMs = dailyBaseMs
        self.extensionMs = extensionMs
        self.maxExtensions = maxExtensions
        self.timeZone = timeZone
    }

    /// Bounds for user input: a day has at most 25 hours; a hundred puzzles a day is already absurd.
    public static let minutesRange: ClosedRange<Double> = 0...1500
    public static let maxExtensionsRange: ClosedRange<Int64> = 0...100

    public enum Key {
        public static let dailyBase = "policy.dailyBaseMinutes"
        public static let extensionSize = "policy.extensionMinutes"
        public static let maxExtensions = "policy.maxExtensions"
        public static let timeZone = "policy.timezone"
    }

    /// Reads the policy keys of the balance suite; a missing or mistyped key keeps its default.
    init(values: [String: Value]) {
        var policy = BalancePolicy.standard
        func millis(_ key: String) -> Int64? {
            switch values[key] {
            case .double(let d)?: BalanceAmount.millis(minutes: d, in: Self.minutesRange)
            case .int(let i)?: BalanceAmount.millis(minutes: Double(i), in: Self.minutesRange)
            default: nil
            }
        }
        if let v = millis(Key.dailyBase) { policy.dailyBaseMs = v }
        if let v = millis(Key.extensionSize) { policy.extensionMs = v }
        if case .int(let n)? = values[Key.maxExtensions], Self.maxExtensionsRange.contains(n) { policy.maxExtensions = n }
        if case .string(let tz)? = values[Key.timeZone], !tz.isEmpty { policy.timeZone = tz }
        self = policy
    }
}
