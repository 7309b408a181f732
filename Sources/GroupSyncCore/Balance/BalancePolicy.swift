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
    /// The changes of the daily base, oldest first (`DailyBaseChange`): a day that is over and that a
    /// device never drew on counts at the base of that day, not at today's.
    public var dailyBaseChanges: [DailyBaseChange] = []

    public static let standard = BalancePolicy(dailyBaseMs: 0, extensionMs: 5 * 60_000, maxExtensions: 5, timeZone: "UTC")

    /// The daily base in force on `day`: the base before the first change made on a later day, or the
    /// current one.
    public func dailyBaseMs(on day: CivilDate) -> Int64 {
        dailyBaseChanges.first { $0.day > day }?.beforeMs ?? dailyBaseMs
    }

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
        public static let dailyBaseChanges = "policy.dailyBaseChanges"
    }

    /// Reads the policy keys of the balance suite; a missing or mistyped key keeps its default.
    init(values: [String: Value]) {
        var policy = BalancePolicy.standard
        func millis(_ key: String) -> Int64? { Self.millis(minutes: values[key]) }
        if let v = millis(Key.dailyBase) { policy.dailyBaseMs = v }
        if let v = millis(Key.extensionSize) { policy.extensionMs = v }
        if case .int(let n)? = values[Key.maxExtensions], Self.maxExtensionsRange.contains(n) { policy.maxExtensions = n }
        if case .string(let tz)? = values[Key.timeZone], !tz.isEmpty { policy.timeZone = tz }
        if case .array(let items)? = values[Key.dailyBaseChanges] {
            // Sorted by day, stably: of several changes on one day, the first one's `before` held until then.
            policy.dailyBaseChanges = items.compactMap(DailyBaseChange.init).enumerated()
                .sorted { ($0.element.day, $0.offset) < ($1.element.day, $1.offset) }.map(\.element)
        }
        self = policy
    }

    /// A stored number of minutes (a double, or an int) in `minutesRange`, as milliseconds.
    static func millis(minutes value: Value?) -> Int64? {
        switch value {
        case .double(let d)?: BalanceAmount.millis(minutes: d, in: minutesRange)
        case .int(let i)?: BalanceAmount.millis(minutes: Double(i), in: minutesRange)
        default: nil
        }
    }
}

/// One change of the daily base: made on `day` (in the policy's zone), where the base had been `beforeMs`.
/// Without it, a day a device never drew on (its daemon stopped all day) was drawn later at the base of the
/// day it was looked at: a base raised or cut after the day made or took away minutes that day had given
/// (found by review: a refund of a day's unused allowance, or usage reported late, at the new base).
public struct DailyBaseChange: Equatable, Sendable {
    public var day: CivilDate
    public var beforeMs: Int64

    public init(day: CivilDate, beforeMs: Int64) {
        self.day = day
        self.beforeMs = beforeMs
    }

    /// The history keeps this many changes, the latest: days before the earliest one kept count at its `before`.
    public static let kept = 64

    var value: Value { .dictionary(["day": .string(day.description), "beforeMinutes": .double(BalanceAmount.minutes(beforeMs))]) }

    init?(_ value: Value) {
        guard case .dictionary(let d) = value, case .string(let text)? = d["day"], let day = CivilDate(parsing: text),
              let ms = BalancePolicy.millis(minutes: d["beforeMinutes"]) else { return nil }
        self.init(day: day, beforeMs: ms)
    }
}
