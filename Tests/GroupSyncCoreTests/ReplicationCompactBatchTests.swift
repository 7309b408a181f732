import Testing
@testable import GroupSyncCore

/// Protocol version 2's `changes`: compact tables, deflate when it pays, bounded inflation, and
/// negotiation with peers that only speak version 1.
@Suite struct ReplicationCompactBatchTests {
    static let v2 = ProtocolVersion.compactBatches
    static let suite = "group.com.example.bench"

    /// `count` changes like the benchmark's: one suite, one origin, keys spread out, 80-byte text values.
    static func benchLikeBatch(count: Int, after: Int64 = 100_000) -> ChangeBatch {
        var generator = SeededGenerator(seed: 7)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        let changes = (0..<count).map { i in
            var text = Array("r1-k\(i * 1000 + 1)-".utf8)
            while text.count < 80 { text.append(alphabet[Int.random(in: 0..<64, using: &generator)]) }
            return Change(sequence: after + Int64(i) + 1,
                          entry: ReplicationFixtures.entry("key-\(i * 1000 + 1)", .string(String(decoding: text, as: UTF8.self)),
                                                           wall: 1_732_886_400_000 + Int64(i) * 3, origin: 1, suite: suite))
        }
        return ChangeBatch(after: after, through: after + Int64(count), changes: changes)
    }

    static func decode(_ payload: [UInt8], version: UInt32 = v2, maxBodyBytes: Int = Frame.defaultMaxBytes) throws(MessageError) -> Message? {
        try MessageCodec.decode(Frame(type: MessageType.changes.rawValue, payload: payload), version: version, maxBodyBytes: maxBodyBytes)
    }

    /// The body encoding byte follows `after` and `through`.
    static func bodyEncoding(_ payload: [UInt8]) throws -> UInt8 {
        var r = ByteReader(payload)
        _ = try r.readVarint()
        _ = try r.readVarint()
        return try r.readByte()
    }

    // MARK: Round trips

    @Test(arguments: ReplicationMessageTests.samples) func everyMessageRoundTripsInVersion2(message: Message) throws {
        let frame = MessageCodec.frame(message, version: Self.v2)
        #expect(try MessageCodec.decode(frame, version: Self.v2) == message)
        if case .changes = message {} else {
            // Only `changes` differs between versions.
            #expect(frame == MessageCodec.frame(message))
        }
    }

    @Test func aBenchLikeBatchIsDeflatedAndCostsUnder70BytesAChange() throws {
        let batch = Self.benchLikeBatch(count: 100)
        let v1 = MessageCodec.payload(.changes(batch))
        let v2 = MessageCodec.payload(.changes(batch), version: Self.v2)
        #expect(try Self.bodyEncoding(v2) == MessageCodec.BodyEncoding.deflate.rawValue)
        #expect(v2.count < 100 * 70, "\(v2.count) bytes for 100 changes (version 1: \(v1.count))")
        #expect(v1.count > 100 * 150)
        #expect(try Self.decode(v2) == .changes(batch))
    }

    /// Swift's `String` equality is canonical equivalence, but stores tell names apart by their bytes: a
    /// batch with NFC and NFD spellings of one suite name must arrive as two suites, not be filed under one.
    @Test func suiteNamesThatDifferOnlyInNormalizationStayApart() throws {
        let composed = "group.\u{E9}", decomposed = "group.e\u{301}"
        #expect(composed == decomposed, "equal to Swift, which is the trap")
        let changes = [composed, decomposed, composed, decomposed].enumerated().map { i, suite in
            Change(sequence: Int64(i) + 1, entry: ReplicationFixtures.entry("k\(i)", .int(Int64(i)), wall: 1_732_886_400_000, origin: 1, suite: suite))
        }
        let batch = ChangeBatch(after: 0, through: 4, changes: changes)
        guard case .changes(let decoded)? = try Self.decode(MessageCodec.payload(.changes(batch), version: Self.v2)) else {
            Issue.record("did not decode as a batch")
            return
        }
        #expect(decoded.changes.map { Array($0.entry.suite.utf8) } == changes.map { Array($0.entry.suite.utf8) })
    }

    @Test func anIncompressibleBodyIsSentStored() throws {
        var generator = SeededGenerator(seed: 3)
        let noise = (0..<2_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let batch = ChangeBatch(after: 0, through: 1, changes: [
            Change(sequence: 1, entry: ReplicationFixtures.entry("noise", .data(noise), wall: 5)),
        ])
        let payload = MessageCodec.payload(.changes(batch), version: Self.v2)
        #expect(try Self.bodyEncoding(payload) == MessageCodec.BodyEncoding.stored.rawValue)
        #expect(try Self.decode(payload) == .changes(batch))
        // And a tiny one (the empty first batch) is never worth deflating.
        let empty = MessageCodec.payload(.changes(ChangeBatch(after: 7, through: 7, changes: [])), version: Self.v2)
        #expect(empty == [7, 7, 0, 0, 0, 0])
    }

    @Test func aBulkCatchUpBatchIsStoredUnlessTheConfigurationAllowsDeflatingIt() throws {
        let batch = Self.benchLikeBatch(count: 500)
        func payload(_ compression: ChangeBatchEncoder.Compression) -> [UInt8] {
            var encoder = ChangeBatchEncoder(version: Self.v2, after: batch.after, compression: compression)
            for change in batch.changes { _ = encoder.append(change) }
            return encoder.payload(through: batch.through)
        }
        let stored = payload(.default), deflated = payload(.whenItPays(upToBodyBytes: .max))
        #expect(try Self.bodyEncoding(stored) == MessageCodec.BodyEncoding.stored.rawValue)
        #expect(try Self.bodyEncoding(deflated) == MessageCodec.BodyEncoding.deflate.rawValue)
        // Even stored, the tables make it a third smaller than version 1.
        #expect(stored.count * 3 < MessageCodec.payload(.changes(batch)).count * 2)
        #expect(deflated.count * 10 < stored.count * 7)
        #expect(try Self.decode(stored) == .changes(batch))
        #expect(try Self.decode(deflated) == .changes(batch))
    }

    @Test func theEncoderStopsAtItsBudgetAndLeavesTheBatchAsItWas() throws {
        let batch = Self.benchLikeBatch(count: 50)
        var encoder = ChangeBatchEncoder(version: Self.v2, after: batch.after, maxPayloadBytes: 1_000, compression: .never)
        var taken: [Change] = []
        for change in batch.changes {
            guard encoder.append(change) else { break }
            taken.append(change)
        }
        #expect(taken.count > 5 && taken.count < 50)
        let payload = encoder.payload(through: taken.last!.sequence)
        #expect(payload.count <= 1_000)
        #expect(try Self.decode(payload) == .changes(ChangeBatch(after: batch.after, through: taken.last!.sequence, changes: taken)))
    }

    // MARK: Negotiation

    /// Connects `a` (default versions) and `b` (offering `bVersions`) and lets them sync.
    static func sync(bVersions: ClosedRange<UInt32>) -> (ReplicationLink, ReplicationNode, ReplicationNode) {
        let net = ReplicationNetwork()
        let a = net.addNode("a"), b = net.addNode("b")
        for k in 0..<30 { net.set(a, "a\(k)", .string("from a, number \(k), with some text to deflate")) }
        net.set(b, "b", .int(1))
        net.delete(b, "b")
        let link = net.link(a, b)
        net.connect(link)
        var older = SessionConfiguration()
        older.versions = bVersions
        link.sessions[1] = PeerSession(peer: a.device, deviceName: "b", configuration: older)
        link.inFlight[0] = []
        net.route(link.sessions[1]!.start(at: net.time(b), store: b.store), from: 1, on: link)
        net.runUntilQuiet()
        return (link, a, b)
    }

    @Test func aVersion1PeerAndAVersion2PeerAgreeOnVersion1() {
        let (link, a, b) = Self.sync(bVersions: 1...1)
        #expect(link.sessions.map { $0?.negotiatedVersion } == [1, 1])
        #expect(link.closeReasons == [[], []])
        #expect(ReplicationFixtures.converged([a, b]))
        #expect(link.entriesDelivered == [1, 30])
    }

    @Test func twoVersion2PeersAgreeOnVersion2() {
        let (link, a, b) = Self.sync(bVersions: ProtocolVersion.supported)
        #expect(link.sessions.map { $0?.negotiatedVersion } == [2, 2])
        #expect(ReplicationFixtures.converged([a, b]))
        #expect(link.entriesDelivered == [1, 30])
    }

    @Test func aPeerOfferingOnlyVersion2StillTalksToUs() {
        let (link, a, b) = Self.sync(bVersions: 2...2)
        #expect(link.sessions.map { $0?.negotiatedVersion } == [2, 2])
        #expect(ReplicationFixtures.converged([a, b]))
    }

    @Test func theLayoutsDoNotMix() {
        // A version 2 batch read as version 1 (or the reverse) is refused, not misread: the session must
        // use the negotiated version both ways.
        let batch = Self.benchLikeBatch(count: 3)
        #expect(throws: MessageError.self) { try Self.decode(MessageCodec.payload(.changes(batch), version: Self.v2), version: 1) }
        #expect(throws: MessageError.self) { try Self.decode(MessageCodec.payload(.changes(batch), version: 1)) }
    }

    // MARK: Hostile input

    /// `after`, `through`, the deflate encoding byte and a declared length, then `stream`.
    static func deflated(declaring declared: Int, _ stream: [UInt8], after: Int64 = 0, through: Int64 = 9) -> [UInt8] {
        var w = ByteWriter()
        w.writeVarint(UInt64(after))
        w.writeVarint(UInt64(through))
        w.write(MessageCodec.BodyEncoding.deflate.rawValue)
        w.writeVarint(UInt64(declared))
        w.write(contentsOf: stream)
        return w.bytes
    }

    static func expectMalformed(_ payload: [UInt8], maxBodyBytes: Int = Frame.defaultMaxBytes, saying words: String,
                                sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let message = try decode(payload, maxBodyBytes: maxBodyBytes)
            Issue.record("decoded \(String(describing: message)) but must be refused", sourceLocation: sourceLocation)
        } catch {
            guard case .malformed(.changes, let why) = error else {
                Issue.record("refused as \(error), not as malformed changes", sourceLocation: sourceLocation)
                return
            }
            #expect(error.description.contains(words), "\(why)", sourceLocation: sourceLocation)
        }
    }

    @Test func decompressionBombsAreRefused() throws {
        let zeros = [UInt8](repeating: 0, count: 4 << 20)
        let bomb = try #require(RawDeflate.compress(zeros, level: 9, shorterThan: zeros.count))
        #expect(bomb.count < 8_192)
        // Declared honestly, it is larger than the frame limit: refused before inflating anything.
        Self.expectMalformed(Self.deflated(declaring: zeros.count + 1, bomb), saying: "outside 1...\(Frame.defaultMaxBytes)")
        Self.expectMalformed(Self.deflated(declaring: 64 * 1024, bomb), maxBodyBytes: 32 * 1024, saying: "outside 1...32768")
        // Declared small, it is cut off at the declared length.
        Self.expectMalformed(Self.deflated(declaring: 1_000, bomb), saying: "inflates to more than its declared 1000 bytes")
        // A lying length the other way.
        let body = [UInt8](repeating: 7, count: 500)
        let stream = try #require(RawDeflate.compress(body, level: 6, shorterThan: body.count))
        Self.expectMalformed(Self.deflated(declaring: 501, stream), saying: "fewer than its declared 501 bytes")
        Self.expectMalformed(Self.deflated(declaring: 0, stream), saying: "outside 1...")
    }

    @Test func brokenDeflateStreamsAreRefused() throws {
        let batch = Self.benchLikeBatch(count: 20, after: 0)
        let good = MessageCodec.payload(.changes(batch), version: Self.v2)
        #expect(try Self.bodyEncoding(good) == MessageCodec.BodyEncoding.deflate.rawValue)
        Self.expectMalformed(Array(good.dropLast(3)), saying: "ends before its deflate stream")
        Self.expectMalformed(good + [0], saying: "bytes follow the end of the deflate stream")
        Self.expectMalformed(Self.deflated(declaring: 100, [0xFF, 0xFF, 0xFF]), saying: "not a valid deflate stream")
        Self.expectMalformed(Self.deflated(declaring: 100, []), saying: "ends before its deflate stream")
        // Garbage after the body's changes, inside the deflated bytes.
        var body = ByteWriter()
        body.write(contentsOf: [0, 0, 0, 0xAA])
        let stream = try #require(RawDeflate.compress(body.bytes + [UInt8](repeating: 0, count: 100), level: 6, shorterThan: 104))
        Self.expectMalformed(Self.deflated(declaring: 104, stream), saying: "bytes after the changes in the deflated body")
    }

    @Test func tablesAndDifferencesAreChecked() {
        var w = ByteWriter()
        w.writeVarint(0)
        w.writeVarint(9)
        w.write(MessageCodec.BodyEncoding.stored.rawValue)
        let head = w.bytes
        // A huge origin count is refused before reserving room for it.
        Self.expectMalformed(head + [1, 1, 0x73] + [0xFF, 0xFF, 0xFF, 0xFF, 0x0F], saying: "input ends too early")
        Self.expectMalformed(head + [0, 0, 5], saying: "input ends too early")
        Self.expectMalformed(head + [9], saying: "input ends too early")
        Self.expectMalformed(head + [0, 0, 0, 0], saying: "1 bytes after the message")
        Self.expectMalformed(head.dropLast() + [2, 0, 0, 0], saying: "neither 0 (stored) nor 1 (deflate)")
        Self.expectMalformed([5, 4, 0, 0, 0, 0], saying: "before its start")
    }

    @Test func aSessionRefusesABombAndLeavesTheStoreAlone() throws {
        let net = ReplicationNetwork()
        let a = net.addNode("a"), b = net.addNode("b")
        let link = net.connected(a, b)
        #expect(link.sessions[1]?.negotiatedVersion == Self.v2)
        let before = b.store.entries
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        let bomb = try #require(RawDeflate.compress(zeros, level: 9, shorterThan: zeros.count))
        let frame = Frame(type: MessageType.changes.rawValue, payload: Self.deflated(declaring: 4_096, bomb, after: 0, through: 1))
        let outputs = link.sessions[1]!.receive(bytes: frame.encoded, at: net.time(b), store: b.store)
        #expect(outputs.contains { if case .close(.malformedMessage) = $0 { true } else { false } })
        #expect(outputs.contains { if case .log(let line) = $0 { line.contains("inflates to more than its declared 4096 bytes") } else { false } })
        #expect(b.store.entries == before)
    }
}
