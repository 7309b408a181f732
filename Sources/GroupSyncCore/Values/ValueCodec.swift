/// The binary form of a `Value`, shared by the SQLite file and the wire protocol.
///
/// One tag byte, then the payload. Doubles and dates keep their exact IEEE-754 bits; dictionaries are
/// written with sorted keys so equal values always encode to equal bytes (the merge tie-break and the
/// protocol test vectors depend on that). The format is specified in `Protocol/PROTOCOL.md`.
public enum ValueCodec {
    enum Tag: UInt8 {
        case string = 1, int = 2, double = 3, boolFalse = 4, boolTrue = 5, date = 6, data = 7, array = 8, dictionary = 9
    }

    /// Deeper nesting than any App Group holds; the bound keeps a hostile input from exhausting the stack.
    public static let maxDepth = 64
    /// The largest encoded value the store keeps (`Store.maxValueBytes`): 1 MiB.
    public static let maxStoredBytes = 1 << 20

    public static func encode(_ value: Value) -> [UInt8] {
        var writer = ByteWriter()
        encode(value, into: &writer)
        return writer.bytes
    }

    public static func encode(_ value: Value, into writer: inout ByteWriter) {
        switch value {
        case .string(let s):
            writer.write(Tag.string.rawValue)
            writer.writeString(s)
        case .int(let i):
            writer.write(Tag.int.rawValue)
            writer.writeSignedVarint(i)
        case .double(let d):
            writer.write(Tag.double.rawValue)
            writer.writeUInt64(d.bitPattern)
        case .bool(let b):
            writer.write(b ? Tag.boolTrue.rawValue : Tag.boolFalse.rawValue)
        case .date(let d):
            writer.write(Tag.date.rawValue)
            writer.writeUInt64(d.bitPattern)
        case .data(let bytes):
            writer.write(Tag.data.rawValue)
            writer.writeLengthPrefixed(bytes)
        case .array(let items):
            writer.write(Tag.array.rawValue)
            writer.writeVarint(UInt64(items.count))
            for item in items { encode(item, into: &writer) }
        case .dictionary(let dict):
            writer.write(Tag.dictionary.rawValue)
            writer.writeVarint(UInt64(dict.count))
            for key in Self.keysInCodeOrder(dict) {
                writer.writeString(key)
                encode(dict[key]!, into: &writer)
            }
        }
    }

    /// A dictionary's keys in the order PROTOCOL.md §4.1 writes them: by code point as written, which is the
    /// order of their UTF-8 bytes. Not Swift's `<`, which compares canonically equivalent forms: on keys that
    /// mix precomposed and decomposed letters it is no strict order, so `sorted()` gave each process its own
    /// order (from its hash seed) and equal values different bytes, which the merge took for changes (found by
    /// an independent implementation of the protocol).
    public static func keysInCodeOrder(_ dict: [String: Value]) -> [String] {
        dict.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// Decodes exactly one value that fills the whole buffer.
    public static func decode(_ bytes: [UInt8]) throws(DecodingError) -> Value {
        var reader = ByteReader(bytes)
        let value = try decode(from: &reader)
        guard reader.isAtEnd else { throw .malformed("\(reader.remaining) trailing bytes after value") }
        return value
    }

    /// Decodes one value, refused as soon as it runs past `maxBytes` of the buffer: a peer's value over the
    /// store's limit is refused before the rest of it is decoded, as a decoded value takes many times its
    /// encoded size (an array of a million bools, about 40 times).
    public static func decode(from reader: inout ByteReader, maxBytes: Int) throws(DecodingError) -> Value {
        let end = reader.offset + maxBytes
        let value = try decode(from: &reader, depth: 0, end: end)
        guard reader.offset <= end else { throw .malformed("a value over \(maxBytes) bytes") }
        return value
    }

    public static func decode(from reader: inout ByteReader, depth: Int = 0) throws(DecodingError) -> Value {
        try decode(from: &reader, depth: depth, end: .max)
    }

    private static func decode(from reader: inout ByteReader, depth: Int, end: Int) throws(DecodingError) -> Value {
        guard depth < maxDepth else { throw .malformed("value nested deeper than \(maxDepth)") }
        guard reader.offset <= end else { throw .malformed("a value over the size limit") }
        let rawTag = try reader.readByte()
        guard let tag = Tag(rawValue: rawTag) else { throw .malformed("unknown value tag \(rawTag)") }
        switch tag {
        case .string: return .string(try reader.readString())
        case .int: return .int(try reader.readSignedVarint())
        case .double, .date:
            let d = Double(bitPattern: try reader.readUInt64())
            guard d.isFinite else { throw .malformed("non-finite number") }
            return tag == .double ? .double(d) : .date(d)
        case .boolFalse: return .bool(false)
        case .boolTrue: return .bool(true)
        case .data: return .data(try reader.readLengthPrefixed())
        case .array:
            // Every element takes at least one byte, so a count larger than what is left is a lie (and a smaller
            // one is not trusted with a reservation of its size: `ByteReader.reservation`).
            let count = try reader.readLength()
            var items: [Value] = []
            items.reserveCapacity(ByteReader.reservation(forAnnounced: count))
            for _ in 0..<count { items.append(try decode(from: &reader, depth: depth + 1, end: end)) }
            return .array(items)
        case .dictionary:
            let count = try reader.readLength()
            var dict: [String: Value] = [:]
            dict.reserveCapacity(ByteReader.reservation(forAnnounced: count))
            for _ in 0..<count {
                let key = try reader.readString()
                guard dict[key] == nil else { throw .malformed("duplicate dictionary key '\(key)'") }
                dict[key] = try decode(from: &reader, depth: depth + 1, end: end)
            }
            return .dictionary(dict)
        }
    }
}
