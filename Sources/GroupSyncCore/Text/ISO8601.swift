/// ISO 8601 dates for the CLI, without Foundation's formatters (and the ICU they pull in).
///
/// Output: UTC with `Z`, milliseconds shown only when present (`2026-11-29T13:15:00Z`,
/// `2026-11-29T13:15:00.250Z`). Input: a date (`2026-11-29`, midnight UTC) or a date-time with optional
/// seconds, optional fractional seconds and a `Z` or `±HH:MM` offset. Not read: ISO 8601's basic format
/// (`20261129T131500Z`), week and ordinal dates.
public enum ISO8601 {
    /// The instants a date may hold: years 0000 through 9999, the years four ISO 8601 digits write and
    /// `parse` reads back (`Value.isStorable` refuses others).
    public static let representableSeconds: Range<Double> = -62_167_219_200..<253_402_300_800

    /// Total: a date outside `representableSeconds` (only a store written before it was refused holds one)
    /// prints with a signed, expanded year instead of trapping, and one beyond ±285,000 years as that bound.
    /// `withMillis`: always three digits of milliseconds (`.000` too), for lines that line up, such as the
    /// daemon's log; otherwise only when there are some.
    public static func format(secondsSince1970 seconds: Double, withMillis: Bool = false) -> String {
        let bounded = seconds.isFinite ? min(max(seconds, -9e12), 9e12) : 0
        let totalMillis = Int64((bounded * 1000).rounded())
        let millis = Int(((totalMillis % 1000) + 1000) % 1000)
        let totalSeconds = (totalMillis - Int64(millis)) / 1000
        let days = floorDiv(totalSeconds, 86_400)
        let secondOfDay = Int(totalSeconds - days * 86_400)
        let (y, m, d) = civil(fromDays: days)
        let year = (0...9999).contains(y) ? pad(y, 4) : (y < 0 ? "-" : "+") + pad(abs(y), 6)
        var out = "\(year)-\(pad(m, 2))-\(pad(d, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
        if millis != 0 || withMillis { out += ".\(pad(millis, 3))" }
        return out + "Z"
    }

    /// Rounded to the millisecond, the precision `format` prints: a date read and written back through the
    /// CLI or the control socket is the date stored, and one that rounds past 9999 is refused, not stored
    /// to print as a year `parse` cannot read.
    public static func parse(_ text: String) -> Double? {
        parseExactly(text).map(toMillisecond)
    }

    /// `seconds` at the millisecond `format` prints it with.
    public static func toMillisecond(_ seconds: Double) -> Double { (seconds * 1000).rounded() / 1000 }

    private static func parseExactly(_ text: String) -> Double? {
        let c = Array(text.utf8)
        var i = 0
        func number(_ digits: Int) -> Int? {
            guard i + digits <= c.count else { return nil }
            var v = 0
            for k in 0..<digits {
                let ch = c[i + k]
                guard ch >= 48 && ch <= 57 else { return nil }
                v = v * 10 + Int(ch - 48)
            }
            i += digits
            return v
        }
        func literal(_ ch: Character) -> Bool {
            guard i < c.count, c[i] == ch.asciiValue! else { return false }
            i += 1
            return true
        }
        guard let year = number(4), literal("-"), let month = number(2), literal("-"), let day = number(2),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day) else { return nil }
        var seconds = Double(days(fromYear: year, month: month, day: day)) * 86_400
        if i == c.count { return seconds }
        guard literal("T") || literal("t") || literal(" "),
              let hour = number(2), literal(":"), let minute = number(2), hour < 24, minute < 60 else { return nil }
        seconds += Double(hour * 3600 + minute * 60)
        // Seconds may be left out (ISO 8601's reduced precision, `2026-11-29T13:15Z`); a fraction needs them.
        guard literal(":") else { return zoned(seconds) }
        guard let second = number(2), second < 61 else { return nil }
        seconds += Double(second)
        if literal(".") || literal(",") {
            var fraction = 0.0, scale = 0.1, digits = 0
            while i < c.count, c[i] >= 48, c[i] <= 57 {
                fraction += Double(c[i] - 48) * scale
                scale /= 10
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            seconds += fraction
        }
        return zoned(seconds)

        /// The zone that ends a date-time: `Z`, or an offset `±HH:MM` (`±HHMM`) taken off to give UTC.
        func zoned(_ seconds: Double) -> Double? {
            if literal("Z") || literal("z") { return i == c.count ? seconds : nil }
            let sign: Double
            if literal("+") { sign = 1 } else if literal("-") { sign = -1 } else { return nil }
            guard let offsetHours = number(2) else { return nil }
            _ = literal(":")
            guard let offsetMinutes = number(2), i == c.count, offsetHours < 24, offsetMinutes < 60 else { return nil }
            return seconds - sign * Double(offsetHours * 3600 + offsetMinutes * 60)
        }
    }

    // Howard Hinnant's days-from-civil and civil-from-days: exact for the proleptic Gregorian calendar.
    static func days(fromYear year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = floorDiv(y, 400)
        let yoe = y - era * 400
        let mp = Int64((month + 9) % 12)
        let doy = (153 * mp + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays days: Int64) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        return (Int(y), Int(m), Int(d))
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }

    private static func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
