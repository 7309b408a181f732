/// Reads what `ByteWriter` wrote, checking every bound: input may come from a hostile peer or a damaged
/// file, so a short or inconsistent buffer is an error, never a crash or a large allocation.
public struct ByteReader {
    private let bytes: [UInt8]
    public private(set) var offset: Int

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
    }

    public var isAtEnd: Bool { offset == bytes.count }
    public var remaining: Int { bytes.count - offset }

    public mutating func readByte() throws(DecodingError) -> UInt8 {
        guard offset < bytes.count else { throw .truncated }
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func readBytes(_ count: Int) throws(DecodingError) -> [UInt8] {
        guard count >= 0, count <= remaining else { throw .truncated }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    public mutating func readVarint() throws(DecodingError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte()
            guard shift < 64, !(shift == 63 && byte > 1) else { throw .malformed("varint overflows 64 bits") }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    public mutating func readSignedVarint() throws(DecodingError) -> Int64 {
        let raw = try readVarint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    // Fixed-width numbers and strings are read in place, without copying their bytes into an array first:
    // a catch-up decodes hundreds of thousands of them.

    public mutating func readUInt64() throws(DecodingError) -> UInt64 {
        guard remaining >= 8 else { throw .truncated }
        var value: UInt64 = 0
        for index in offset..<(offset + 8) { value = (value << 8) | UInt64(bytes[index]) }
        offset += 8
        return value
    }

    /// A length prefix is checked against what is actually left before anything is allocated.
    public mutating func readLength() throws(DecodingError) -> Int {
        let length = try readVarint()
        guard length <= UInt64(remaining) else { throw .truncated }
        return Int(length)
    }

    /// Everything not read yet, without copying; the reader is then at its end.
    public mutating func readRemaining() -> ArraySlice<UInt8> {
        defer { offset = bytes.count }
        return bytes[offset...]
    }

    /// How many elements to reserve room for when a peer announced `count`. `readLength` bounds a count only
    /// by the bytes left, one byte an element, while an element in memory takes tens of bytes, and a nested
    /// value holds its reservation while its children decode: reserving on trust let one 4 MiB frame of
    /// nested dictionaries claim ~12 GB of address space. Beyond this many, a collection grows as its
    /// elements actually arrive.
    public static func reservation(forAnnounced count: Int) -> Int { min(count, 1024) }

    public mutating func readLengthPrefixed() throws(DecodingError) -> [UInt8] {
        try readBytes(try readLength())
    }

    public mutating func readString() throws(DecodingError) -> String {
        let count = try readLength()
        let start = offset
        offset += count
        let string = bytes.withUnsafeBufferPointer { buffer in
            String(validating: UnsafeBufferPointer(rebasing: buffer[start..<(start + count)]), as: UTF8.self)
        }
        guard let string else { throw .malformed("string is not valid UTF-8") }
        return string
    }
}

public enum DecodingError: Error, Equatable, CustomStringConvertible {
    case truncated
    case malformed(String)

    public var description: String {
        switch self {
        case .truncated: "input ends too early"
        case .malformed(let why): "malformed input: \(why)"
        }
    }
}
