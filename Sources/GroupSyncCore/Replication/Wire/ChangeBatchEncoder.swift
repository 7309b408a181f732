/// Builds the payload of one `changes` message change by change, so a sender can fill a batch up to a byte
/// budget without encoding anything twice.
///
/// Version 1 writes every change whole. Version 2 (`Protocol/PROTOCOL.md` §5.2.2) writes each suite and
/// each origin once per batch in a table that changes refer to by index, sequences and wall times as
/// differences from the change before, and deflates the body when that makes it shorter: a change then
/// costs little more than its key and value.
public struct ChangeBatchEncoder {
    public enum Compression: Sendable, Equatable {
        /// Deflate a body of at most this many bytes when the result is shorter (version 2 only).
        case whenItPays(upToBodyBytes: Int)
        /// Always send the body stored: for test vectors, whose deflated bytes depend on the zlib build.
        case never

        /// Deflates live changes and delta catch-ups (100 changes of the benchmark are about 10 KB), at
        /// zlib's default level, for a fraction of a millisecond. A bulk catch-up's batches (2,000 changes,
        /// about 200 KB) go stored: deflate runs at about 40 MB/s on a small machine, which would double the
        /// sender's CPU while both daemons share two cores; on a slow link, raise the bound
        /// (`SessionConfiguration.compression`), and larger bodies are deflated at the fastest level.
        public static let `default` = Compression.whenItPays(upToBodyBytes: 16 * 1024)
    }

    public let version: UInt32
    public let after: Int64
    public let compression: Compression
    /// Bound on the body before compression (tables and changes), so the stored form always fits a frame.
    public let maxBodyBytes: Int
    /// Changes appended so far.
    public private(set) var count = 0
    /// The changes, as written after the tables (version 2) or after the count (version 1).
    private var changes = ByteWriter()

    // Version 2 state.
    private var suites: [String] = []
    /// Each name by its first spelling under Swift equality; `index(ofSuite:)` checks the bytes.
    private var suiteIndex: [String: Int] = [:]
    private var suiteTableBytes = 0
    private var origins: [DeviceID] = []
    private var originIndex: [DeviceID: Int] = [:]
    private var previousSequence: Int64
    private var previousWall: Int64 = 0

    /// Room a payload needs besides its body: `after`, `through` and the body's length (varints of at most
    /// 10 bytes each), and the body encoding byte.
    public static let payloadOverheadBytes = 31
    /// Room for the body's three counts (suites, origins, changes), varints of at most 10 bytes each.
    static let countBytes = 30
    /// Smaller bodies are sent stored: deflate's own overhead leaves nothing to gain.
    static let minCompressibleBytes = 64
    /// Bodies up to this size are deflated at zlib's default level (about 0.3 ms for 10 KB here); larger
    /// ones, when the configuration allows them, at the fastest level (a few percent larger, ~40% faster).
    static let thoroughCompressionMaxBytes = 16 * 1024

    /// - Parameter maxPayloadBytes: the frame limit minus its type byte.
    public init(version: UInt32, after: Int64, maxPayloadBytes: Int = Frame.defaultMaxBytes - Frame.typeBytes,
                compression: Compression = .default) {
        self.version = version
        self.after = after
        self.compression = compression
        self.maxBodyBytes = maxPayloadBytes - Self.payloadOverheadBytes
        self.previousSequence = after
    }

    /// The table index of the suite with exactly these bytes. Swift's `String` equality is canonical
    /// equivalence, so `suiteIndex` may answer with another spelling of the name (NFC "é" for NFD "é"),
    /// while the store, and every peer's store, tells names apart by their bytes: taking that answer
    /// would file the entry under the other suite on the receiving side.
    private func index(ofSuite suite: String) -> Int? {
        guard let index = suiteIndex[suite] else { return nil }
        if suites[index].utf8.elementsEqual(suite.utf8) { return index }
        return suites.firstIndex { $0.utf8.elementsEqual(suite.utf8) }
    }

    /// The body's size so far, with room for its counts.
    public var bodyBytes: Int {
        switch version {
        case ProtocolVersion.original: 10 + changes.count
        default: Self.countBytes + suiteTableBytes + origins.count * DeviceID.byteCount + changes.count
        }
    }

    /// Appends `change` (sequences must increase) if the body stays within `maxBodyBytes`; returns
    /// whether it did. A change that does not fit leaves the batch as it was.
    public mutating func append(_ change: Change) -> Bool {
        let start = changes.count
        let entry = change.entry
        switch version {
        case ProtocolVersion.original:
            changes.write(contentsOf: MessageCodec.encode(change))
            guard bodyBytes <= maxBodyBytes else {
                changes.truncate(to: start)
                return false
            }
        default:
            let knownSuite = index(ofSuite: entry.suite), knownOrigin = originIndex[entry.version.origin]
            let newSuiteBytes = knownSuite == nil ? Self.stringBytes(entry.suite) : 0
            let newOriginBytes = knownOrigin == nil ? DeviceID.byteCount : 0
            precondition(change.sequence > previousSequence, "a batch's changes must come in increasing sequence order")
            changes.writeVarint(UInt64(change.sequence - previousSequence - 1))
            changes.writeVarint(UInt64(knownSuite ?? suites.count))
            changes.writeString(entry.key)
            changes.writeSignedVarint(entry.version.hlc.wallMillis &- previousWall)
            changes.writeVarint(UInt64(entry.version.hlc.logical))
            changes.writeVarint(UInt64(knownOrigin ?? origins.count))
            MessageCodec.writeValue(entry.value, into: &changes)
            guard bodyBytes + newSuiteBytes + newOriginBytes <= maxBodyBytes else {
                changes.truncate(to: start)
                return false
            }
            if knownSuite == nil {
                if suiteIndex[entry.suite] == nil { suiteIndex[entry.suite] = suites.count }
                suites.append(entry.suite)
                suiteTableBytes += newSuiteBytes
            }
            if knownOrigin == nil {
                originIndex[entry.version.origin] = origins.count
                origins.append(entry.version.origin)
            }
            previousSequence = change.sequence
            previousWall = entry.version.hlc.wallMillis
        }
        count += 1
        return true
    }

    /// The finished payload; `through` is at least the last change's sequence.
    public func payload(through: Int64) -> [UInt8] {
        var w = ByteWriter(reservingCapacity: Self.payloadOverheadBytes + bodyBytes)
        w.writeVarint(UInt64(after))
        w.writeVarint(UInt64(through))
        guard version != ProtocolVersion.original else {
            w.writeVarint(UInt64(count))
            w.write(contentsOf: changes.bytes)
            return w.bytes
        }
        var body = ByteWriter(reservingCapacity: bodyBytes)
        body.writeVarint(UInt64(suites.count))
        for suite in suites { body.writeString(suite) }
        body.writeVarint(UInt64(origins.count))
        for origin in origins { body.write(contentsOf: origin.bytes) }
        body.writeVarint(UInt64(count))
        body.write(contentsOf: changes.bytes)

        if case .whenItPays(let maxBytes) = compression, body.count >= Self.minCompressibleBytes, body.count <= maxBytes {
            var length = ByteWriter()
            length.writeVarint(UInt64(body.count))
            let level = body.count <= Self.thoroughCompressionMaxBytes ? RawDeflate.defaultLevel : RawDeflate.fastestLevel
            if let deflated = RawDeflate.compress(body.bytes, level: level, shorterThan: body.count - length.count) {
                w.write(MessageCodec.BodyEncoding.deflate.rawValue)
                w.write(contentsOf: length.bytes)
                w.write(contentsOf: deflated)
                return w.bytes
            }
        }
        w.write(MessageCodec.BodyEncoding.stored.rawValue)
        w.write(contentsOf: body.bytes)
        return w.bytes
    }

    private static func stringBytes(_ string: String) -> Int {
        let count = string.utf8.count
        var lengthBytes = 1
        while count >> (7 * lengthBytes) != 0 { lengthBytes += 1 }
        return lengthBytes + count
    }
}
