/// The byte layout of each message's payload (specified in `Protocol/PROTOCOL.md`).
///
/// Sequences are unsigned varints no larger than `Int64.max`; times are zig-zag varints of milliseconds;
/// strings are a varint length and UTF-8. Decoding is strict — a payload must be consumed exactly —
/// except for `hello`, which is read before versions are agreed and so may carry fields a later version
/// appends.
///
/// Layouts depend on the negotiated protocol version only for `changes` (version 2 is compact and may be
/// deflated: `ChangeBatchEncoder`, `MessageCodec+CompactChanges`). Every other message, `hello` above all,
/// is the same in every version, so `version` matters only once both hellos are in.
public enum MessageCodec {
    // MARK: Encoding

    public static func frame(_ message: Message, version: UInt32 = ProtocolVersion.original) -> Frame {
        Frame(type: message.type.rawValue, payload: payload(message, version: version))
    }

    /// The complete frame, ready for the transport.
    public static func encode(_ message: Message, version: UInt32 = ProtocolVersion.original) -> [UInt8] {
        frame(message, version: version).encoded
    }

    public static func payload(_ message: Message, version: UInt32 = ProtocolVersion.original) -> [UInt8] {
        var w = ByteWriter()
        switch message {
        case .hello(let hello):
            w.writeVarint(UInt64(hello.versions.lowerBound))
            w.writeVarint(UInt64(hello.versions.upperBound))
            w.writeString(hello.deviceName)
            w.writeString(hello.storeID)
            w.writeSignedVarint(hello.physicalMillis)
            if let resume = hello.resume {
                w.write(1)
                w.writeString(resume.storeID)
                w.writeVarint(UInt64(resume.sequence))
            } else {
                w.write(0)
            }
            if let head = hello.head { w.writeVarint(UInt64(head)) }
        case .changes(let batch):
            var encoder = ChangeBatchEncoder(version: version, after: batch.after, maxPayloadBytes: .max)
            for change in batch.changes { _ = encoder.append(change) }
            return encoder.payload(through: batch.through)
        case .ack(let sequence):
            w.writeVarint(UInt64(sequence))
        case .request(let after):
            w.writeVarint(UInt64(after))
        case .ping(let millis):
            w.writeSignedVarint(millis)
        case .pong(let echo, let millis):
            w.writeSignedVarint(echo)
            w.writeSignedVarint(millis)
        case .goodbye(let code, let text), .error(let code, let text):
            w.writeVarint(code.rawValue)
            w.writeString(text)
        }
        return w.bytes
    }

    /// One change of a batch: sequence, suite, key, HLC (wall, logical), origin (32 raw bytes), then the value
    /// in `ValueCodec` form, or a single 0 byte for a tombstone (no value tag is 0).
    public static func encode(_ change: Change) -> [UInt8] {
        var w = ByteWriter()
        let entry = change.entry
        w.writeVarint(UInt64(change.sequence))
        w.writeString(entry.suite)
        w.writeString(entry.key)
        w.writeSignedVarint(entry.version.hlc.wallMillis)
        w.writeVarint(UInt64(entry.version.hlc.logical))
        w.write(contentsOf: entry.version.origin.bytes)
        writeValue(entry.value, into: &w)
        return w.bytes
    }

    /// A value in `ValueCodec` form, or the tombstone byte.
    static func writeValue(_ value: Value?, into w: inout ByteWriter) {
        if let value { ValueCodec.encode(value, into: &w) } else { w.write(tombstone) }
    }

    static let tombstone: UInt8 = 0

    // MARK: Decoding

    /// The message in a frame, or `nil` for an optional type (0x80–0xFF) this version does not know.
    /// - Parameters:
    ///   - version: the negotiated protocol version (before `hello` is in, any: only version-independent
    ///     messages are allowed then).
    ///   - maxBodyBytes: bound on a deflated body once inflated; the frame limit, so a compressed frame
    ///     holds no more than a stored one could.
    public static func decode(_ frame: Frame, version: UInt32 = ProtocolVersion.original,
                              maxBodyBytes: Int = Frame.defaultMaxBytes) throws(MessageError) -> Message? {
        guard let type = MessageType(rawValue: frame.type) else {
            if frame.type >= MessageType.firstOptional { return nil }
            throw .unknownType(frame.type)
        }
        do throws(DecodingError) {
            var r = ByteReader(frame.payload)
            let message = if type == .changes && version >= ProtocolVersion.compactBatches {
                try decodeCompactChanges(&r, maxBodyBytes: maxBodyBytes)
            } else {
                try decodePayload(type, from: &r)
            }
            if type != .hello && !r.isAtEnd { throw .malformed("\(r.remaining) bytes after the message") }
            return message
        } catch {
            throw .malformed(type, error)
        }
    }

    private static func decodePayload(_ type: MessageType, from r: inout ByteReader) throws(DecodingError) -> Message {
        switch type {
        case .hello:
            let lowest = try readVersion(&r), highest = try readVersion(&r)
            guard lowest <= highest else { throw .malformed("version range \(lowest)...\(highest) is empty") }
            let name = try readLabel(&r, "device name")
            let storeID = try readLabel(&r, "store ID")
            let millis = try r.readSignedVarint()
            let resume: Watermark?
            switch try r.readByte() {
            case 0: resume = nil
            case 1: resume = Watermark(storeID: try readLabel(&r, "resume store ID"), sequence: try readSequence(&r))
            case let flag: throw .malformed("resume flag \(flag) is neither 0 nor 1")
            }
            // Optional, and trailing bytes a reader does not understand are ignored (§5.1): a head that does not
            // read as one is taken as absent.
            let head = r.isAtEnd ? nil : try? readSequence(&r)
            return .hello(Hello(versions: lowest...highest, deviceName: name, storeID: storeID, physicalMillis: millis, resume: resume, head: head))
        case .changes:
            let after = try readSequence(&r), through = try readSequence(&r)
            guard after <= through else { throw .malformed("batch ends at \(through), before its start \(after)") }
            // Each change takes more than one byte, so a count beyond what is left is refused; a count within it
            // is still not trusted with a reservation of its size (`ByteReader.reservation`).
            let count = try r.readLength()
            var changes: [Change] = []
            changes.reserveCapacity(ByteReader.reservation(forAnnounced: count))
            var previous = after
            for _ in 0..<count {
                let change = try decodeChange(&r)
                guard change.sequence > previous, change.sequence <= through else {
                    throw .malformed("change sequence \(change.sequence) is not in increasing order within \(after)...\(through)")
                }
                previous = change.sequence
                changes.append(change)
            }
            return .changes(ChangeBatch(after: after, through: through, changes: changes))
        case .ack: return .ack(sequence: try readSequence(&r))
        case .request: return .request(after: try readSequence(&r))
        case .ping: return .ping(millis: try r.readSignedVarint())
        case .pong: return .pong(echoMillis: try r.readSignedVarint(), millis: try r.readSignedVarint())
        case .goodbye: return .goodbye(ReasonCode(rawValue: try r.readVarint()), try r.readString())
        case .error: return .error(ReasonCode(rawValue: try r.readVarint()), try r.readString())
        }
    }

    private static func decodeChange(_ r: inout ByteReader) throws(DecodingError) -> Change {
        let sequence = try readSequence(&r)
        let suite = try r.readString()
        let key = try r.readString()
        // HLC time is never before 1970; refusing negative walls also keeps drift arithmetic from overflowing.
        let wall = try r.readSignedVarint()
        guard wall >= 0 else { throw .malformed("HLC wall time \(wall) is negative") }
        let rawLogical = try r.readVarint()
        guard let logical = UInt32(exactly: rawLogical) else { throw .malformed("HLC logical counter \(rawLogical) exceeds 32 bits") }
        let origin: DeviceID
        do { origin = try DeviceID(bytes: try r.readBytes(DeviceID.byteCount)) } catch { throw .malformed("bad origin: \(error)") }
        let value = try readValue(&r)
        let entry = Entry(suite: suite, key: key, value: value, version: Version(hlc: HLC(wallMillis: wall, logical: logical), origin: origin))
        return Change(sequence: sequence, entry: entry)
    }

    /// A value, or `nil` for the tombstone byte. One over the store's limit is refused as soon as it runs
    /// past it, before the rest of it costs memory.
    static func readValue(_ r: inout ByteReader) throws(DecodingError) -> Value? {
        guard try peek(r) != tombstone else {
            _ = try r.readByte()
            return nil
        }
        return try ValueCodec.decode(from: &r, maxBytes: ValueCodec.maxStoredBytes)
    }

    static func peek(_ r: ByteReader) throws(DecodingError) -> UInt8 {
        var copy = r
        return try copy.readByte()
    }

    static func readSequence(_ r: inout ByteReader) throws(DecodingError) -> Int64 {
        let raw = try r.readVarint()
        guard let sequence = Int64(exactly: raw) else { throw .malformed("sequence \(raw) exceeds 2^63-1") }
        return sequence
    }

    private static func readVersion(_ r: inout ByteReader) throws(DecodingError) -> UInt32 {
        let raw = try r.readVarint()
        guard let version = UInt32(exactly: raw), version >= 1 else { throw .malformed("protocol version \(raw) is not in 1...2^32-1") }
        return version
    }

    private static func readLabel(_ r: inout ByteReader, _ what: String) throws(DecodingError) -> String {
        let label = try r.readString()
        guard label.utf8.count <= Hello.maxLabelBytes else { throw .malformed("\(what) is longer than \(Hello.maxLabelBytes) bytes") }
        return label
    }
}

/// Why a frame does not hold a message this version can act on.
public enum MessageError: Error, Equatable, CustomStringConvertible {
    /// A required-range type (0x01–0x7F) this version does not know.
    case unknownType(UInt8)
    case malformed(MessageType, DecodingError)

    public var description: String {
        switch self {
        case .unknownType(let type):
            "unknown message type 0x\(String(type, radix: 16)): the peer speaks a protocol this version does not understand"
        case let .malformed(type, error): "\(type) message: \(error)"
        }
    }
}
