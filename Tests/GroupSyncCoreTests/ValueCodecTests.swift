import Testing
import Foundation
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

    /// A value from the wire over the store's limit is refused once it runs past it, not decoded whole: a
    /// decoded array of bools takes about 40 times its encoded size.
    @Test func aValueOverTheLimitIsRefusedWhileDecoding() throws {
        let fits = Value.array(Array(repeating: .bool(true), count: (1 << 20) - 16))
        let over = Value.array(Array(repeating: .bool(true), count: 3 << 20))
        var reader = ByteReader(ValueCodec.encode(fits))
        #expect(try ValueCodec.decode(from: &reader, maxBytes: ValueCodec.maxStoredBytes) == fits)
        reader = ByteReader(ValueCodec.encode(over))
        #expect(throws: DecodingError.self) { try ValueCodec.decode(from: &reader, maxBytes: ValueCodec.maxStoredBytes) }
        #expect(reader.offset <= ValueCodec.maxStoredBytes + 16, "stopped at the limit, not at the end")
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

    /// A count is bounded only by the bytes left (one byte an element), and a nested value keeps its own
    /// reservation while its children decode: reserving room for announced counts on trust let one 4 MiB
    /// value of 63 nested dictionaries, each announcing 4 million entries, claim ~12 GB of address space
    /// before it failed to decode, and abort the process where address space is limited.
    @Test func announcedCountsAreNotTrustedWithTheirReservation() throws {
        var bomb = ByteWriter()
        for _ in 0..<63 {
            bomb.write(ValueCodec.Tag.dictionary.rawValue)
            bomb.writeVarint(4_000_000)
            bomb.writeString("k")
        }
        bomb.write(0xEE)  // no such tag: the decoding fails here, at the bottom
        let bytes = bomb.bytes + [UInt8](repeating: 0, count: 4_100_000)
        let before = try Self.peakVirtualKilobytes()
        #expect(throws: DecodingError.self) { try ValueCodec.decode(bytes) }
        let grown = try Self.peakVirtualKilobytes() - before
        #expect(grown < 1_000_000, "the process's peak address space grew by \(grown / 1024) MB")
    }

    /// `VmPeak` from /proc/self/status: the largest the address space has been, reserved or touched.
    static func peakVirtualKilobytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmPeak:") }),
              let kilobytes = Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" })[1]) else {
            throw DecodingError.malformed("no VmPeak in /proc/self/status")
        }
        return kilobytes
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
