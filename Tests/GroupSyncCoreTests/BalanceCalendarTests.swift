import Testing
@testable import GroupSyncCore

/// Local days: civil dates, POSIX rules, TZif bytes, and the 23- and 25-hour days clocks change on.
@Suite struct BalanceCalendarTests {
    static let madrid = POSIXTimeZoneRule(parsing: "CET-1CEST,M3.5.0,M10.5.0/3")!
    static let newYork = POSIXTimeZoneRule(parsing: "EST5EDT,M3.2.0,M11.1.0")!
    static let santiago = POSIXTimeZoneRule(parsing: "<-04>4<-03>,M9.1.6/24,M4.1.6/24")!

    static func utc(_ y: Int, _ m: Int, _ d: Int, _ h: Int = 0, _ min: Int = 0) -> Int64 {
        (CivilDate(year: y, month: m, day: d)!.ordinal * 86_400 + Int64(h * 3600 + min * 60)) * 1000
    }

    @Test func civilDatesRoundTripThroughOrdinals() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<2000 {
            let ordinal = Int64.random(in: -800_000...800_000, using: &generator)
            let date = CivilDate(ordinal: ordinal)
            #expect(date.ordinal == ordinal)
            #expect(CivilDate(parsing: date.description) == date || date.year < 0 || date.year > 9999)
        }
        #expect(CivilDate(ordinal: 0).description == "1970-01-01")
        #expect(CivilDate(ordinal: 0).weekday == 4)
        #expect(CivilDate(parsing: "2024-02-29") != nil)
        #expect(CivilDate(parsing: "2023-02-29") == nil)
        #expect(CivilDate(parsing: "2024-2-9") == nil)
    }

    /// Only exactly `YYYY-MM-DD` in ASCII digits is a date: the byte-wise reading refuses what the
    /// character-wise one did (digits of other scripts, signs, spaces, marks, a date inside a longer text).
    @Test func onlyTheExactFormIsADate() {
        #expect(CivilDate(parsing: "0000-01-01") == CivilDate(year: 0, month: 1, day: 1))
        #expect(CivilDate(parsing: "9999-12-31") == CivilDate(year: 9999, month: 12, day: 31))
        #expect(CivilDate(parsing: "2026-12-01"[...]) == CivilDate(year: 2026, month: 12, day: 1))
        for text in ["", "2026-12-1", "2026-12-001", "2026/12/01", "2026-12-01 ", " 2026-12-01", "+026-12-01",
                     "2026--12-01", "2026-1a-01", "\u{FF12}026-12-01", "2026-12-0\u{0661}", "2026-12-01\u{301}", "2026-1\u{301}2-01",
                     "2026-00-01", "2026-13-01", "2026-04-31", "2026-12-00", "day.2026-12-01", "2026-12-01.x", "20261201xx"] {
            #expect(CivilDate(parsing: text) == nil, "\(text.debugDescription)")
        }
    }

    @Test func posixRulesGiveTheRightOffsets() {
        #expect(Self.madrid.utcOffsetSeconds(atUTCMillis: Self.utc(2026, 1, 15)) == 3600)
        #expect(Self.madrid.utcOffsetSeconds(atUTCMillis: Self.utc(2026, 7, 15)) == 7200)
        // Spain springs forward on 2026-03-29 at 01:00 UTC and falls back on 2026-10-25 at 01:00 UTC.
        #expect(Self.madrid.utcOffsetSeconds(atUTCMillis: Self.utc(2026, 3, 29, 0, 59)) == 3600)
        #expect(Self.madrid.utcOffsetSeconds(atUTCMillis: Self.utc(2026, 3, 29, 1, 0)) == 7200)
        #expect(Self.madrid.utcOffsetSeconds(atUTCMillis: Self.utc(2026, 10, 25, 0, 59)) == 7200)
        #expect(Self.madrid.utcOffsetSeconds(atUTCMillis: Self.utc(2026, 10, 25, 1, 0)) == 3600)
        #expect(Self.newYork.utcOffsetSeconds(atUTCMillis: Self.utc(2026, 3, 8, 6, 59)) == -18000)
        #expect(Self.newYork.utcOffsetSeconds(atUTCMillis: Self.utc(2026, 3, 8, 7, 0)) == -14400)
        // Southern hemisphere: daylight time spans the new year.
        #expect(Self.santiago.utcOffsetSeconds(atUTCMillis: Self.utc(2026, 1, 10)) == -10800)
        #expect(Self.santiago.utcOffsetSeconds(atUTCMillis: Self.utc(2026, 6, 10)) == -14400)
        #expect(POSIXTimeZoneRule(parsing: "UTC0")?.utcOffsetSeconds(atUTCMillis: 0) == 0)
        #expect(POSIXTimeZoneRule(parsing: "<+0545>-5:45")?.utcOffsetSeconds(atUTCMillis: 0) == 20700)
        for bad in ["", "C", "CET", "CET-1CEST,M13.1.0,M10.5.0", "CET-1CEST,M3.5.0", "CET-1CEST,J0,J10"] {
            #expect(POSIXTimeZoneRule(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test func posixOffsetsAreAtMost24HoursButTransitionTimesMayReach167() {
        // POSIX allows hh from 0 to 24 for the offsets; a larger one would put local days more than a
        // day away from UTC, beyond what `LocalCalendar.start(of:)` searches, and give wrong day bounds.
        #expect(POSIXTimeZoneRule(parsing: "XYZ-24")?.utcOffsetSeconds(atUTCMillis: 0) == 86_400)
        #expect(POSIXTimeZoneRule(parsing: "XYZ+24")?.utcOffsetSeconds(atUTCMillis: 0) == -86_400)
        for bad in ["XYZ-100", "XYZ-25", "XYZ24:00:01", "XYZ-167", "CET-1CEST-25,M3.5.0,M10.5.0/3"] {
            #expect(POSIXTimeZoneRule(parsing: bad) == nil, "\(bad)")
        }
        // Transition times keep RFC 8536's −167…167 hours (zones whose change falls "at 24:00" or later).
        #expect(POSIXTimeZoneRule(parsing: "CET-1CEST,M3.5.0/167,M10.5.0/-167") != nil)
        #expect(POSIXTimeZoneRule(parsing: "CET-1CEST,M3.5.0/168,M10.5.0/3") == nil)
        // Whatever parses, each local day's bounds are found: it starts on its own date and lasts 23–25 h.
        for text in ["XYZ-24", "XYZ+24", "<+14>-14", "<-12>12"] {
            let calendar = LocalCalendar(rule: POSIXTimeZoneRule(parsing: text)!)
            let day = CivilDate(year: 2026, month: 3, day: 1)!
            #expect(calendar.day(atUTCMillis: calendar.start(of: day)) == day, "\(text)")
            #expect(calendar.lengthMillis(of: day) == 86_400_000, "\(text)")
        }
    }

    @Test func daylightSavingDaysHave23And25Hours() {
        let calendar = LocalCalendar(rule: Self.madrid)
        let spring = CivilDate(year: 2026, month: 3, day: 29)!
        let autumn = CivilDate(year: 2026, month: 10, day: 25)!
        #expect(calendar.lengthMillis(of: spring) == 23 * 3_600_000)
        #expect(calendar.lengthMillis(of: autumn) == 25 * 3_600_000)
        #expect(calendar.lengthMillis(of: spring.previous) == 24 * 3_600_000)
        #expect(calendar.start(of: spring) == Self.utc(2026, 3, 28, 23))
        #expect(calendar.start(of: autumn.next) == Self.utc(2026, 10, 25, 23))
        // 23:30 local on the long day is still that day; half an hour later it is the next.
        #expect(calendar.day(atUTCMillis: Self.utc(2026, 10, 25, 22, 30)) == autumn)
        #expect(calendar.day(atUTCMillis: Self.utc(2026, 10, 25, 23, 0)) == autumn.next)
        let ny = LocalCalendar(rule: Self.newYork)
        #expect(ny.lengthMillis(of: CivilDate(year: 2026, month: 3, day: 8)!) == 23 * 3_600_000)
        #expect(ny.lengthMillis(of: CivilDate(year: 2026, month: 11, day: 1)!) == 25 * 3_600_000)
    }

    @Test func aDayWhoseMidnightDoesNotExistStartsAtOneOClock() {
        // Chile springs forward at 24:00 on the first Saturday of September: that Sunday has no 00:00.
        let calendar = LocalCalendar(rule: Self.santiago)
        let sunday = CivilDate(year: 2026, month: 9, day: 6)!
        #expect(calendar.start(of: sunday) == Self.utc(2026, 9, 6, 4))
        #expect(calendar.lengthMillis(of: sunday.previous) == 24 * 3_600_000)
        #expect(calendar.lengthMillis(of: sunday) == 23 * 3_600_000)
    }

    @Test func tzifBytesParseWithTheirFooterRule() throws {
        // A v2 file: two transitions in 2000, then the footer rule for everything later.
        let bytes = TZifBuilder.build(transitions: [(Self.utc(2000, 3, 26, 1) / 1000, 1), (Self.utc(2000, 10, 29, 1) / 1000, 0)],
                                      types: [3600, 7200], footer: "CET-1CEST,M3.5.0,M10.5.0/3")
        let zone = try TZifTimeZone(bytes: bytes)
        #expect(zone.utcOffsetSeconds(atUTCMillis: Self.utc(1999, 7, 1)) == 3600)
        #expect(zone.utcOffsetSeconds(atUTCMillis: Self.utc(2000, 7, 1)) == 7200)
        #expect(zone.utcOffsetSeconds(atUTCMillis: Self.utc(2000, 12, 1)) == 3600)
        #expect(zone.utcOffsetSeconds(atUTCMillis: Self.utc(2026, 7, 1)) == 7200)
        #expect(LocalCalendar(rule: zone).lengthMillis(of: CivilDate(year: 2026, month: 3, day: 29)!) == 23 * 3_600_000)
        #expect(throws: TimeZoneError.self) { try TZifTimeZone(bytes: Array(bytes.prefix(60))) }
        #expect(throws: TimeZoneError.self) { try TZifTimeZone(bytes: Array("TZjf".utf8) + bytes.dropFirst(4)) }
    }

    @Test func truncatedOrRandomTZifBytesAreRefusedNotTrusted() throws {
        var generator = SeededGenerator(seed: 11)
        let good = TZifBuilder.build(transitions: [(1000, 1)], types: [0, 3600], footer: "UTC0")
        #expect(throws: Never.self, "the whole file is read") { try TZifTimeZone(bytes: good) }
        for length in 0..<good.count - 2 {
            #expect(throws: TimeZoneError.self, "cut to \(length) of \(good.count) bytes") { try TZifTimeZone(bytes: Array(good.prefix(length))) }
        }
        // A changed byte may still leave a valid file; whatever is accepted answers offsets a clock can have.
        for _ in 0..<300 {
            var bytes = good
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            if let zone = try? TZifTimeZone(bytes: bytes) {
                for at: Int64 in [-5000, 0, 5000, 10_000_000] { #expect(abs(zone.utcOffsetSeconds(atUTCMillis: at)) <= 26 * 3600) }
            }
        }
    }
}

/// Writes minimal TZif v2 files for tests.
enum TZifBuilder {
    static func build(transitions: [(at: Int64, type: Int)], types: [Int32], footer: String) -> [UInt8] {
        func be(_ v: Int64, _ size: Int) -> [UInt8] { (0..<size).reversed().map { UInt8(truncatingIfNeeded: v >> ($0 * 8)) } }
        func header(_ timeCount: Int, _ typeCount: Int) -> [UInt8] {
            Array("TZif2".utf8) + [UInt8](repeating: 0, count: 15)
                + be(0, 4) + be(0, 4) + be(0, 4) + be(Int64(timeCount), 4) + be(Int64(typeCount), 4) + be(4, 4)
        }
        // A v1 block with one type and no transitions, then the real v2 block.
        var out = header(0, 1) + be(0, 4) + [0, 0] + Array("ABC\0".utf8)
        out += header(transitions.count, types.count)
        for t in transitions { out += be(t.at, 8) }
        for t in transitions { out.append(UInt8(t.type)) }
        for offset in types { out += be(Int64(offset), 4) + [offset == types[0] ? 0 : 1, 0] }
        out += Array("ABC\0".utf8)
        out += [0x0A] + Array(footer.utf8) + [0x0A]
        return out
    }
}
