import Testing
@testable import GroupSyncCore

@Suite struct ValueCodecTests {
    static let samples: [Value] = [
        .string(""), .string("héllo ✓ \u{0}"), .int(0), .int(-5), .int(.max), .int(.min),
        .double(0.25), .double(7.0), .double(-0.0), .double(1e-300), .double(.greatestFiniteMagnitude),
        .bool(true), .bool(false), .date(1_795_958_497.25), .data([]), .data([0, 255, 7]),
        .array([]), .dictionary([:]),
        .array([.dictionary(["type": .string("blockSelection"), "n": .double(7.0), "m": .int(7)]), .array([.bool(true)])]),
    ]

    @Test(arguments: samples) func roundTripsExactly(value: Value) throws {
        let decoded = try ValueCodec.decode(ValueCodec.encode(value))
        #expect(decoded == value)
        #expect(decoded.typeName == value.typeName)
        if case .double(let original) = value, case .double(let back) = decoded {
            #expect(original.bitPattern == back.bitPattern)
        }
    }

    @Test func intAndDoubleStayDistinct() throws {
        #expect(try ValueCodec.decode(ValueCodec.encode(.double(7.0))) != .int(7))
        #expect(ValueCodec.encode(.double(7.0)) != ValueCodec.encode(.int(7)))
    }

    @Test func equalDictionariesEncodeEqually() {
        var a: [String: Value] = [:], b: [String: Value] = [:]
        for i in 0..<50 { a["k\(i)"] = .int(Int64(i)) }
        for i in (0..<50).reversed() { b["k\(i)"] = .int(Int64(i)) }
        #expect(ValueCodec.encode(.dictionary(a)) == ValueCodec.encode(.dictionary(b)))
    }

    @Test func malformedInputIsAnErrorNotACrash() {
        #expect(throws: DecodingError.self) { try ValueCodec.decode([]) }
        #expect(throws: DecodingError.self) { try ValueCodec.decode([42]) }
        #expect(throws: DecodingError.self) { try ValueCodec.decode([1, 5, 65]) }  // string claims 5 bytes, has 1
        #expect(throws: DecodingError.self) { try ValueCodec.decode([8, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]) }  // huge array count
        #expect(throws: DecodingError.self) { try ValueCodec.decode([3] + [0x7F, 0xF8, 0, 0, 0, 0, 0, 0]) }  // NaN
        #expect(throws: DecodingError.self) { try ValueCodec.decode([4, 4]) }  // trailing byte
        #expect(throws: DecodingError.self) { try ValueCodec.decode([9, 2, 1, 97, 4, 1, 97, 5]) }  // duplicate key
        #expect(throws: DecodingError.self) { try ValueCodec.decode(Array(repeating: 8, count: 100) + [0]) }  // too deep
    }

    @Test func randomBytesNeverCrash() {
        var rng = SeededGenerator(seed: 7)
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 0..<24, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if let value = try? ValueCodec.decode(bytes) {
                // Whatever decodes must re-encode to a value that decodes the same.
                #expect((try? ValueCodec.decode(ValueCodec.encode(value))) == value)
            }
        }
    }
}
