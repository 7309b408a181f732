/// Decoding version 2 `changes` (`Protocol/PROTOCOL.md` §5.2.2): a stored or deflated body of suite and
/// origin tables, then changes that refer to them by index, with sequences and wall times as differences.
///
/// The payload comes from the network, so every count is checked against the bytes left before anything is
/// allocated, and a deflated body is inflated into at most its declared length, itself no more than the
/// frame limit: a decompression bomb costs what a full stored frame would, then is refused.
extension MessageCodec {
    /// How a version 2 body is carried.
    enum BodyEncoding: UInt8 {
        case stored = 0
        /// Raw deflate (RFC 1951), preceded by the body's length once inflated.
        case deflate = 1
    }

    static func decodeCompactChanges(_ r: inout ByteReader, maxBodyBytes: Int) throws(DecodingError) -> Message {
        let after = try readSequence(&r), through = try readSequence(&r)
        guard after <= through else { throw .malformed("batch ends at \(through), before its start \(after)") }
        let rawEncoding = try r.readByte()
        switch BodyEncoding(rawValue: rawEncoding) {
        case .stored:
            return try decodeCompactBody(&r, after: after, through: through)
        case .deflate:
            let declared = try r.readVarint()
            guard declared >= 1, declared <= UInt64(maxBodyBytes) else {
                throw .malformed("deflated body declares \(declared) bytes, outside 1...\(maxBodyBytes)")
            }
            var body = ByteReader(try RawDeflate.decompress(r.readRemaining(), count: Int(declared)))
            let message = try decodeCompactBody(&body, after: after, through: through)
            guard body.isAtEnd else { throw .malformed("\(body.remaining) bytes after the changes in the deflated body") }
            return message
        case nil:
            throw .malformed("body encoding \(rawEncoding) is neither 0 (stored) nor 1 (deflate)")
        }
    }

    private static func decodeCompactBody(_ r: inout ByteReader, after: Int64, through: Int64) throws(DecodingError) -> Message {
        let suiteCount = try r.readLength()
        var suites: [String] = []
        suites.reserveCapacity(ByteReader.reservation(forAnnounced: suiteCount))
        for _ in 0..<suiteCount { suites.append(try r.readString()) }

        let originCount = try r.readVarint()
        guard originCount <= UInt64(r.remaining / DeviceID.byteCount) else { throw .truncated }
        var origins: [DeviceID] = []
        origins.reserveCapacity(Int(originCount))
        for _ in 0..<originCount {
            do { origins.append(try DeviceID(bytes: try r.readBytes(DeviceID.byteCount))) } catch { throw .malformed("bad origin: \(error)") }
        }

        // Each change takes more than one byte, so a count beyond what is left is refused; a count within it
        // is still not trusted with a reservation of its size (`ByteReader.reservation`).
        let count = try r.readLength()
        var changes: [Change] = []
        changes.reserveCapacity(ByteReader.reservation(forAnnounced: count))
        var sequence = after, wall: Int64 = 0
        for _ in 0..<count {
            let gap = try r.readVarint()
            // `sequence <= through` holds, so the room left is never negative.
            guard gap < UInt64(through - sequence) else {
                throw .malformed("change sequence \(sequence) + \(gap) + 1 is beyond the batch end \(through)")
            }
            sequence += Int64(gap) + 1
            let suite = try readIndex(&r, into: suites, "suite")
            let key = try r.readString()
            let (next, overflow) = wall.addingReportingOverflow(try r.readSignedVarint())
            // HLC time is never before 1970; refusing negative walls also keeps drift arithmetic from overflowing.
            guard !overflow, next >= 0 else { throw .malformed("HLC wall time \(wall) plus the next difference is negative or overflows") }
            wall = next
            let rawLogical = try r.readVarint()
            guard let logical = UInt32(exactly: rawLogical) else { throw .malformed("HLC logical counter \(rawLogical) exceeds 32 bits") }
            let origin = try readIndex(&r, into: origins, "origin")
            let value = try readValue(&r)
            changes.append(Change(sequence: sequence, entry: Entry(suite: suite, key: key, value: value,
                                                                   version: Version(hlc: HLC(wallMillis: wall, logical: logical), origin: origin))))
        }
        return .changes(ChangeBatch(after: after, through: through, changes: changes))
    }

    private static func readIndex<T>(_ r: inout ByteReader, into table: [T], _ what: String) throws(DecodingError) -> T {
        let index = try r.readVarint()
        guard index < UInt64(table.count) else { throw .malformed("\(what) index \(index) is beyond the batch's \(table.count) \(what)s") }
        return table[Int(index)]
    }
}
