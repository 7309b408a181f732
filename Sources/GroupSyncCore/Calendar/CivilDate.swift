/// A calendar date with no time zone: the name of a local day, such as `2026-03-29`.
///
/// The balance keys its per-day records by this name, so every device that agrees on the time zone
/// agrees on which day a write belongs to. Arithmetic goes through `ordinal` (days since 1970-01-01),
/// with Howard Hinnant's civil-from-days algorithms, valid far beyond any date a balance will see.
public struct CivilDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), day >= 1, day <= CivilDate.daysIn(month: month, year: year) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date `ordinal` days after 1970-01-01 (negative: before).
    public init(ordinal: Int64) {
        let z = ordinal + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        day = Int(dayOfYear - (153 * mp + 2) / 5 + 1)
        month = Int(mp < 10 ? mp + 3 : mp - 9)
        year = Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0))
    }

    /// Days since 1970-01-01.
    public var ordinal: Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    public var next: CivilDate { CivilDate(ordinal: ordinal + 1) }
    public var previous: CivilDate { CivilDate(ordinal: ordinal - 1) }

    /// 0 = Sunday … 6 = Saturday (1970-01-01 was a Thursday).
    public var weekday: Int { Int(((ordinal % 7) + 11) % 7) }

    public static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    public static func < (lhs: CivilDate, rhs: CivilDate) -> Bool { lhs.ordinal < rhs.ordinal }

    /// `YYYY-MM-DD`.
    public var description: String {
        func pad(_ n: Int, _ width: Int) -> String {
            let digits = String(n)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    /// Parses exactly `YYYY-MM-DD`. Byte by byte, as the form is ten ASCII bytes: a balance read parses a date
    /// for every day record of a year of use, and split into characters that was a tenth of the read's time.
    public init?(parsing text: some StringProtocol) {
        guard text.utf8.count == 10 else { return nil }
        var year = 0, month = 0, day = 0
        for (offset, byte) in text.utf8.enumerated() {
            if offset == 4 || offset == 7 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let digit = Int(byte - UInt8(ascii: "0"))
            switch offset {
            case ..<4: year = year * 10 + digit
            case ..<7: month = month * 10 + digit
            default: day = day * 10 + digit
            }
        }
        self.init(year: year, month: month, day: day)
    }
}
