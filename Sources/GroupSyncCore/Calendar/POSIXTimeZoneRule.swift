/// A POSIX `TZ` rule such as `CET-1CEST,M3.5.0,M10.5.0/3`: a standard offset, and optionally a
/// daylight-saving offset with the yearly dates it starts and ends.
///
/// This is the footer of every TZif file (v2+), which modern "slim" zoneinfo files rely on for all
/// instants after their last listed transition, so the day arithmetic must understand it.
/// Note the POSIX sign: `CET-1` means one hour *ahead* of UTC.
public struct POSIXTimeZoneRule: UTCOffsetRule, Equatable {
    /// Seconds ahead of UTC in standard time.
    public let standardOffset: Int64
    public let daylight: Daylight?

    public struct Daylight: Equatable, Sendable {
        /// Seconds ahead of UTC while daylight-saving time is in force.
        public let offset: Int64
        public let start: Transition
        public let end: Transition
    }

    /// A yearly transition: a date rule and the local time of day (seconds, may be negative or past 24 h).
    public struct Transition: Equatable, Sendable {
        public enum DateRule: Equatable, Sendable {
            /// `Jn`: day 1…365, February 29 never counted.
            case julianNoLeap(Int)
            /// `n`: day 0…365, February 29 counted.
            case zeroBased(Int)
            /// `Mm.w.d`: weekday `d` (0 = Sunday) of week `w` (5 = the last) of month `m`.
            case monthWeekDay(month: Int, week: Int, weekday: Int)
        }
        public let date: DateRule
        public let secondsOfDay: Int64
    }

    public init(standardOffset: Int64, daylight: Daylight? = nil) {
        self.standardOffset = standardOffset
        self.daylight = daylight
    }

    public func utcOffsetSeconds(atUTCMillis utcMillis: Int64) -> Int64 {
        guard let daylight else { return standardOffset }
        let seconds = floorDiv(utcMillis, 1000)
        let year = CivilDate(ordinal: floorDiv(seconds + standardOffset, 86_400)).year
        // Both transitions are given in the local time in force just before them.
        let start = daylight.start.localSeconds(in: year) - standardOffset
        let end = daylight.end.localSeconds(in: year) - daylight.offset
        let inDaylight = start < end ? (seconds >= start && seconds < end) : !(seconds >= end && seconds < start)
        return inDaylight ? daylight.offset : standardOffset
    }

    // MARK: Parsing

    /// POSIX gives the offsets' hours as 0…24. Beyond a day, local dates would lie further from UTC than
    /// `LocalCalendar.start(of:)` searches and days would get wrong bounds, so such a rule is refused.
    static let maxOffsetHours: Int64 = 24
    /// Transition times may run from −167 to 167 hours (RFC 8536's extension, used by real TZif footers).
    static let maxTransitionHours: Int64 = 167

    /// Parses a POSIX TZ string; `nil` if it is not one this parser understands.
    public init?(parsing text: String) {
        var scanner = Scanner(Array(text.utf8))
        guard scanner.skipName(), let std = scanner.offset(maxHours: Self.maxOffsetHours) else { return nil }
        standardOffset = -std
        if scanner.atEnd {
            daylight = nil
            return
        }
        guard scanner.skipName() else { return nil }
        var dstOffset = standardOffset + 3600
        if scanner.startsOffset {
            // An offset that is there must be valid: skipping a bad one would read its rest as a rule.
            guard let explicit = scanner.offset(maxHours: Self.maxOffsetHours) else { return nil }
            dstOffset = -explicit
        }
        // The implied daylight offset (an hour ahead) must stay within the bound too.
        guard abs(dstOffset) <= Self.maxOffsetHours * 3600 else { return nil }
        let start: Transition, end: Transition
        if scanner.atEnd {
            // No rule given: POSIX leaves it to the implementation; the US rule is the common default.
            start = Transition(date: .monthWeekDay(month: 3, week: 2, weekday: 0), secondsOfDay: 7200)
            end = Transition(date: .monthWeekDay(month: 11, week: 1, weekday: 0), secondsOfDay: 7200)
        } else {
            guard scanner.take(UInt8(ascii: ",")), let s = scanner.transition(),
                  scanner.take(UInt8(ascii: ",")), let e = scanner.transition(), scanner.atEnd else { return nil }
            start = s
            end = e
        }
        daylight = Daylight(offset: dstOffset, start: start, end: end)
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }
        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func take(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            index += 1
            return true
        }

        /// `CET` or `<+03>`: at least three characters.
        mutating func skipName() -> Bool {
            let begin = index
            if take(UInt8(ascii: "<")) {
                while let c = current, c != UInt8(ascii: ">") { index += 1 }
                guard take(UInt8(ascii: ">")) else { return false }
                return index - begin >= 5
            }
            while let c = current, (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) { index += 1 }
            return index - begin >= 3
        }

        /// Whether an offset (`+`, `-` or a digit) comes next.
        var startsOffset: Bool {
            guard let c = current else { return false }
            return c == UInt8(ascii: "+") || c == UInt8(ascii: "-") || (c >= 0x30 && c <= 0x39)
        }

        mutating func number() -> Int64? {
            var value: Int64 = 0
            var digits = 0
            while let c = current, c >= 0x30 && c <= 0x39, digits < 6 {
                value = value * 10 + Int64(c - 0x30)
                index += 1
                digits += 1
            }
            return digits > 0 ? value : nil
        }

        /// `[+-]hh[:mm[:ss]]` in seconds, at most `maxHours` hours either way.
        mutating func offset(maxHours: Int64) -> Int64? {
            var sign: Int64 = 1
            if take(UInt8(ascii: "-")) { sign = -1 } else { _ = take(UInt8(ascii: "+")) }
            guard let hours = number(), hours <= maxHours else { return nil }
            var total = hours * 3600
            if take(UInt8(ascii: ":")) {
                guard let minutes = number(), minutes < 60 else { return nil }
                total += minutes * 60
                if take(UInt8(ascii: ":")) {
                    guard let seconds = number(), seconds < 60 else { return nil }
                    total += seconds
                }
            }
            guard total <= maxHours * 3600 else { return nil }
            return sign * total
        }

        mutating func transition() -> Transition? {
            let date: Transition.DateRule
            if take(UInt8(ascii: "M")) {
                guard let m = number(), take(UInt8(ascii: ".")), let w = number(), take(UInt8(ascii: ".")), let d = number(),
                      (1...12).contains(m), (1...5).contains(w), (0...6).contains(d) else { return nil }
                date = .monthWeekDay(month: Int(m), week: Int(w), weekday: Int(d))
            } else if take(UInt8(ascii: "J")) {
                guard let n = number(), (1...365).contains(n) else { return nil }
                date = .julianNoLeap(Int(n))
            } else {
                guard let n = number(), (0...365).contains(n) else { return nil }
                date = .zeroBased(Int(n))
            }
            var time: Int64 = 7200
            if take(UInt8(ascii: "/")) {
                guard let t = offset(maxHours: POSIXTimeZoneRule.maxTransitionHours) else { return nil }
                time = t
            }
            return Transition(date: date, secondsOfDay: time)
        }
    }
}

extension POSIXTimeZoneRule.Transition {
    /// The transition's local wall time in `year`, as seconds since 1970-01-01T00:00 local.
    func localSeconds(in year: Int) -> Int64 {
        let january1 = CivilDate(year: year, month: 1, day: 1)!.ordinal
        let dayOrdinal: Int64
        switch date {
        case .julianNoLeap(let n):
            // Day n counts as if February had 28 days: from March on, skip the leap day.
            dayOrdinal = january1 + Int64(n - 1) + (CivilDate.isLeap(year) && n >= 60 ? 1 : 0)
        case .zeroBased(let n):
            dayOrdinal = january1 + Int64(n)
        case let .monthWeekDay(month, week, weekday):
            let first = CivilDate(year: year, month: month, day: 1)!
            var day = 1 + (weekday - first.weekday + 7) % 7 + (week - 1) * 7
            let length = CivilDate.daysIn(month: month, year: year)
            while day > length { day -= 7 }
            dayOrdinal = first.ordinal + Int64(day - 1)
        }
        return dayOrdinal * 86_400 + secondsOfDay
    }
}

/// Division rounding toward negative infinity, for instants before 1970.
@inlinable func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
    let q = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
}
