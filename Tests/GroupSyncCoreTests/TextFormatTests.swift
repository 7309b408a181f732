import Testing
@testable import GroupSyncCore

@Suite struct ISO8601Tests {
    @Test func formatsUTC() {
        #expect(ISO8601.format(secondsSince1970: 0) == "1970-01-01T00:00:00Z")
        #expect(ISO8601.format(secondsSince1970: 1_795_958_100.25) == "2026-11-29T13:15:00.250Z")
        #expect(ISO8601.format(secondsSince1970: -1) == "1969-12-31T23:59:59Z")
        // The daemon's log: every line's time has its milliseconds, so lines line up (found by review).
        #expect(ISO8601.format(secondsSince1970: 0, withMillis: true) == "1970-01-01T00:00:00.000Z")
        #expect(ISO8601.format(secondsSince1970: 1_795_958_100.25, withMillis: true) == "2026-11-29T13:15:00.250Z")
        #expect(ISO8601.format(secondsSince1970: 951_782_400) == "2000-02-29T00:00:00Z")
    }

    @Test func parsesOffsetsAndFractions() {
        #expect(ISO8601.parse("2026-11-29T13:15:00Z") == 1_795_958_100)
        #expect(ISO8601.parse("2026-11-29T14:15:00.25+01:00") == 1_795_958_100.25)
        #expect(ISO8601.parse("2026-11-29T08:15:00-0500") == 1_795_958_100)
        #expect(ISO8601.parse("2026-11-29") == 1_795_910_400)
        // Seconds left out, as ISO 8601 allows (found by review: refused as "expects ISO 8601").
        #expect(ISO8601.parse("2026-11-29T13:15Z") == 1_795_958_100)
        #expect(ISO8601.parse("2026-11-29T14:15+01:00") == 1_795_958_100)
    }

    /// A time of day out of range, or anything after the zone, is not a date-time.
    @Test func outOfRangeTimesAndTextAfterTheZoneAreRefused() {
        for text in ["2026-11-29T24:00Z", "2026-11-29T23:60Z", "2026-11-29T23:59:61Z", "2026-11-29T13:15:00Zx",
                     "2026-11-29T13:15:00+01:00x", "2026-11-29T13:15:00+0100 ", "2026-11-29T13:15:00+24:00", "2026-11-29T13:15:00+01:60"] {
            #expect(ISO8601.parse(text) == nil, "\(text)")
        }
    }

    /// Dates are read at the millisecond they print with, so what `get` shows is what is stored, and a
    /// fraction that rounds into year 10000 makes a date the store refuses rather than one it cannot print.
    @Test func readsToTheMillisecond() {
        #expect(ISO8601.parse("2024-01-01T00:00:00.0004Z") == ISO8601.parse("2024-01-01T00:00:00Z"))
        #expect(ISO8601.parse("2024-01-01T00:00:00.0006Z") == ISO8601.parse("2024-01-01T00:00:00.001Z"))
        let edge = ISO8601.parse("9999-12-31T23:59:59.9999Z")!
        #expect(!Value.date(edge).isStorable)
        #expect(!Value.date(253_402_300_799.9996).isStorable && Value.date(253_402_300_799.999).isStorable)
    }

    @Test(arguments: ["", "2026-13-01", "2026-02-30", "2026-11-29T25:00:00Z", "2026-11-29T13:15:00", "yesterday", "2026-11-29T13:15:00Zjunk", "2026-11-29T13:15:00.Z",
                     "2026-11-29T13:15", "2026-11-29T13:15.5Z", "2026-11-29T13:15:Z", "2026-11-29T13Z"])
    func refusesNonsense(text: String) {
        #expect(ISO8601.parse(text) == nil)
    }

    /// Formatting is total: a date outside years 0000–9999 (refused by the store, but one written before
    /// may exist) prints with an expanded year, and an absurd one does not trap.
    @Test func formattingNeverTraps() {
        #expect(ISO8601.format(secondsSince1970: 1e20).hasPrefix("+"))
        #expect(ISO8601.format(secondsSince1970: -62_198_755_200).hasPrefix("-000001-01-01"))
        #expect(ISO8601.format(secondsSince1970: 253_402_300_800).hasPrefix("+010000-01-01"))
        #expect(!Value.date(253_402_300_800).isStorable && Value.date(253_402_300_799).isStorable)
        #expect(!Value.date(-62_167_219_201).isStorable && Value.date(-62_167_219_200).isStorable)
    }

    @Test func roundTripsThroughText() {
        var rng = SeededGenerator(seed: 3)
        for _ in 0..<2000 {
            let millis = Double(Int64.random(in: -5_000_000_000_000...5_000_000_000_000, using: &rng)) / 1000
            #expect(ISO8601.parse(ISO8601.format(secondsSince1970: millis)) == millis)
        }
    }
}

@Suite struct Base64Tests {
    @Test func matchesRFC4648Vectors() {
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.decode(encoded) == Array(plain.utf8))
        }
    }

    // "Zh==" and "Zm9=" carry bits after the last byte: another spelling of "Zg==" and "Zm8=", refused (found by review).
    @Test(arguments: ["Zg=", "Z===", "Zm9v!", "Zg==Zg==", "=Zg=", "Zh==", "AB==", "Zm9="])
    func refusesMalformed(text: String) {
        #expect(Base64.decode(text) == nil)
    }
}
