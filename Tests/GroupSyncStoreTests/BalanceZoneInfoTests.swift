import Testing
import GroupSyncCore
@testable import GroupSyncStore

/// The shell's side of time zones: reading zoneinfo files for the pure TZif parser.
@Suite struct BalanceZoneInfoTests {
    @Test(.enabled(if: ZoneInfo.isPlausibleName("Europe/Madrid") && (try? ZoneInfo.calendar(named: "Europe/Madrid")) != nil))
    func theSystemZoneFileGivesTheDaylightSavingDays() throws {
        let madrid = try ZoneInfo.calendar(named: "Europe/Madrid")
        #expect(madrid.lengthMillis(of: CivilDate(year: 2026, month: 3, day: 29)!) == 23 * 3_600_000)
        #expect(madrid.lengthMillis(of: CivilDate(year: 2026, month: 10, day: 25)!) == 25 * 3_600_000)
        #expect(madrid.lengthMillis(of: CivilDate(year: 1990, month: 9, day: 30)!) == 25 * 3_600_000, "from the transition table")
        let newYork = try ZoneInfo.calendar(named: "America/New_York")
        #expect(newYork.lengthMillis(of: CivilDate(year: 2026, month: 11, day: 1)!) == 25 * 3_600_000)
    }

    @Test func namesThatCouldEscapeTheZoneFolderAreRefused() {
        for name in ["../../etc/passwd", "/etc/passwd", "Europe/../../x", "Europe//Madrid", "", "Europe/Madrid\n"] {
            #expect(!ZoneInfo.isPlausibleName(name), "\(name)")
            #expect(throws: TimeZoneError.self) { try ZoneInfo.calendar(named: name) }
        }
        #expect(ZoneInfo.isPlausibleName("America/Argentina/Buenos_Aires"))
        #expect(ZoneInfo.isPlausibleName("Etc/GMT+5"))
    }

    /// Links to each machine's own zone exist as files, but devices sharing a policy would each count their own
    /// days by them (found by review).
    @Test func namesOfEachMachinesOwnZoneAreRefused() {
        for name in ["localtime", "posixrules", "right/localtime", "posix/posixrules"] {
            #expect(throws: TimeZoneError.machineLocal(name)) { try ZoneInfo.calendar(named: name) }
        }
    }

    @Test func utcAndPOSIXRulesNeedNoFiles() throws {
        let empty = ["TZDIR": "/nonexistent"]
        #expect(try ZoneInfo.calendar(named: "UTC", environment: empty).lengthMillis(of: CivilDate(year: 2026, month: 3, day: 29)!) == 86_400_000)
        let rule = try ZoneInfo.calendar(named: "CET-1CEST,M3.5.0,M10.5.0/3", environment: empty)
        #expect(rule.lengthMillis(of: CivilDate(year: 2026, month: 3, day: 29)!) == 23 * 3_600_000)
        #expect(throws: TimeZoneError.self) { try ZoneInfo.calendar(named: "Mars/Olympus", environment: empty) }
    }
}
