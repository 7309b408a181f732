/// A time zone read from TZif bytes (RFC 8536, the format of `/usr/share/zoneinfo`): a table of past
/// transitions, then the POSIX rule in the footer for everything after the table.
///
/// Pure: the shell reads the file, this only parses bytes.
public struct TZifTimeZone: UTCOffsetRule {
    /// Transition instants (UTC seconds), ascending, and the offset in force from each one on.
    public let transitions: [(at: Int64, offset: Int64)]
    /// The offset before the first transition (the first local time type, per RFC 8536).
    public let initialOffset: Int64
    /// The footer rule for instants after the last transition, if the file has one.
    public let footer: POSIXTimeZoneRule?

    public init(bytes: [UInt8]) throws(TimeZoneError) {
        var reader = Reader(bytes: bytes)
        let header = try reader.header()
        var version = header.version
        var counts = header.counts
        var timeSize = 4
        if version >= 2 {
            // Skip the 32-bit block: the 64-bit one after it is complete.
            try reader.skip(counts.dataLength(timeSize: 4))
            let second = try reader.header()
            version = second.version
            counts = second.counts
            timeSize = 8
        }
        var times: [Int64] = []
        for _ in 0..<counts.time { times.append(try reader.signed(timeSize)) }
        var indices: [Int] = []
        for _ in 0..<counts.time { indices.append(Int(try reader.byte())) }
        var offsets: [Int64] = []
        for _ in 0..<counts.type {
            offsets.append(try reader.signed(4))
            try reader.skip(2)  // isdst, designation index
        }
        guard !offsets.isEmpty, indices.allSatisfy({ $0 < offsets.count }) else { throw .malformed("no or bad local time types") }
        // The footer's bound, for the same reason: a day further than that from UTC gets wrong bounds
        // (`POSIXTimeZoneRule.maxOffsetHours`). A damaged file said 23,000 days (found by a test that asked).
        guard offsets.allSatisfy({ abs($0) <= POSIXTimeZoneRule.maxOffsetHours * 3600 }) else {
            throw .malformed("a local time type more than \(POSIXTimeZoneRule.maxOffsetHours) hours from UTC")
        }
        try reader.skip(counts.char + counts.leap * (timeSize + 4) + counts.isStd + counts.isUT)
        var footer: POSIXTimeZoneRule?
        if version >= 2 {
            // RFC 8536: a version 2+ file ends with its footer, a rule between two newlines (empty for none).
            // A file cut short inside it is refused: without the rule, the zone's transitions after the last
            // one listed (all of them, in tzdata's "slim" files) would silently stop.
            let rest = reader.rest
            guard rest.first == 0x0A, let close = rest.dropFirst().firstIndex(of: 0x0A) else {
                throw .malformed("truncated TZif footer")
            }
            let text = String(decoding: rest[(rest.startIndex + 1)..<close], as: UTF8.self)
            if !text.isEmpty {
                guard let rule = POSIXTimeZoneRule(parsing: text) else { throw .malformed("footer '\(text)' is not a POSIX TZ rule") }
                footer = rule
            }
        }
        self.transitions = zip(times, indices).map { ($0, offsets[$1]) }
        self.initialOffset = offsets[0]
        self.footer = footer
    }

    public func utcOffsetSeconds(atUTCMillis utcMillis: Int64) -> Int64 {
        let seconds = floorDiv(utcMillis, 1000)
        guard let first = transitions.first, seconds >= first.at else {
            return transitions.isEmpty ? (footer?.utcOffsetSeconds(atUTCMillis: utcMillis) ?? initialOffset) : initialOffset
        }
        if let last = transitions.last, seconds >= last.at, let footer {
            return footer.utcOffsetSeconds(atUTCMillis: utcMillis)
        }
        // The last transition at or before `seconds`.
        var low = 0, high = transitions.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if transitions[mid].at <= seconds { low = mid } else { high = mid - 1 }
        }
        return transitions[low].offset
    }

    private struct Counts {
        var isUT = 0, isStd = 0, leap = 0, time = 0, type = 0, char = 0
        func dataLength(timeSize: Int) -> Int {
            time * timeSize + time + type * 6 + char + leap * (timeSize + 4) + isStd + isUT
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var remaining: Int { bytes.count - index }
        var rest: ArraySlice<UInt8> { bytes[index...] }

        mutating func header() throws(TimeZoneError) -> (version: Int, counts: Counts) {
            guard remaining >= 44, bytes[index..<index + 4].elementsEqual("TZif".utf8) else { throw .malformed("not a TZif file") }
            let v = bytes[index + 4]
            let version = v == 0 ? 1 : Int(v) - 0x30
            guard (1...9).contains(version) else { throw .malformed("unknown TZif version") }
            index += 20
            var counts = Counts()
            counts.isUT = Int(try signed(4)); counts.isStd = Int(try signed(4)); counts.leap = Int(try signed(4))
            counts.time = Int(try signed(4)); counts.type = Int(try signed(4)); counts.char = Int(try signed(4))
            guard [counts.isUT, counts.isStd, counts.leap, counts.time, counts.type, counts.char].allSatisfy({ $0 >= 0 && $0 < 1 << 20 }) else {
                throw .malformed("implausible TZif counts")
            }
            return (version, counts)
        }

        mutating func byte() throws(TimeZoneError) -> UInt8 {
            guard remaining >= 1 else { throw .malformed("truncated TZif data") }
            defer { index += 1 }
            return bytes[index]
        }

        /// A big-endian two's-complement integer of `size` bytes.
        mutating func signed(_ size: Int) throws(TimeZoneError) -> Int64 {
            guard remaining >= size else { throw .malformed("truncated TZif data") }
            var value: UInt64 = 0
            for i in 0..<size { value = value << 8 | UInt64(bytes[index + i]) }
            index += size
            if size < 8, value & (1 << (size * 8 - 1)) != 0 { value |= ~((1 << (size * 8)) - 1) }
            return Int64(bitPattern: value)
        }

        mutating func skip(_ count: Int) throws(TimeZoneError) {
            guard count >= 0, remaining >= count else { throw .malformed("truncated TZif data") }
            index += count
        }
    }
}

public enum TimeZoneError: Error, Equatable, CustomStringConvertible {
    case malformed(String)
    case unknownName(String)
    /// A name that links to each machine's own zone (`localtime`, `posixrules`): devices sharing the policy
    /// would each count their own days.
    case machineLocal(String)

    public var description: String {
        switch self {
        case .machineLocal(let name): "'\(name)' is each machine's own setting, which your other devices do not share; name the zone, such as Europe/Madrid"
        case .malformed(let why): "the time zone data is damaged: \(why)"
        case .unknownName(let name): "'\(name)' is not a time zone name nor a POSIX rule (use an IANA name such as Europe/Madrid, UTC, or a rule such as CET-1CEST,M3.5.0,M10.5.0/3 whose offsets are at most 24 hours)"
        }
    }
}
