import Testing
@testable import GroupSyncCore

@Suite struct ReplicationMessageTests {
    static let origin = ReplicationFixtures.device(3)

    static let samples: [Message] = [
        .hello(Hello(versions: 1...1, deviceName: "Anna's laptop ✓", storeID: "5f1c2a", physicalMillis: 1_732_886_400_000, resume: nil)),
        .hello(Hello(versions: 1...7, deviceName: "", storeID: "", physicalMillis: -5, resume: Watermark(storeID: "abc", sequence: 42))),
        .changes(ChangeBatch(after: 0, through: 0, changes: [])),
        .changes(ChangeBatch(after: 10, through: 500, changes: [
            Change(sequence: 11, entry: Entry(suite: "group.app", key: "balance", value: .double(12.25),
                                               version: Version(hlc: HLC(wallMillis: 1_732_886_400_000, logical: 3), origin: origin))),
            Change(sequence: 12, entry: Entry(suite: "group.app", key: "gone", value: nil,
                                               version: Version(hlc: HLC(wallMillis: 0, logical: .max), origin: origin))),
            Change(sequence: 500, entry: Entry(suite: "s", key: "k", value: .dictionary(["a": .array([.int(-1), .data([0, 1])]), "b": .date(1.5)]),
                                                version: Version(hlc: HLC(wallMillis: .max, logical: 0), origin: origin))),
        ])),
        .ack(sequence: 0), .ack(sequence: .max),
        .request(after: 77),
        .ping(millis: 1_732_886_400_123), .pong(echoMillis: 1_732_886_400_123, millis: .min),
        .goodbye(.shutdown, "daemon stopping"), .error(.clockSkew, "clocks differ"), .error(ReasonCode(rawValue: 999), ""),
    ]

    @Test(arguments: samples) func roundTrips(message: Message) throws {
        let bytes = MessageCodec.encode(message)
        var decoder = FrameDecoder()
        let frames = try decoder.feed(bytes)
        #expect(frames.count == 1)
        #expect(try MessageCodec.decode(frames[0]) == message)
    }

    @Test(arguments: samples) func everyTruncationIsAnErrorNotACrash(message: Message) {
        let frame = MessageCodec.frame(message)
        for length in 0..<frame.payload.count {
            let cut = Frame(type: frame.type, payload: Array(frame.payload.prefix(length)))
            #expect(throws: MessageError.self, "\(message.type) cut at \(length)") { try MessageCodec.decode(cut) }
        }
    }

    @Test func trailingBytesAreRefusedExceptInHello() throws {
        let ack = MessageCodec.frame(.ack(sequence: 5))
        #expect(throws: MessageError.self) { try MessageCodec.decode(Frame(type: ack.type, payload: ack.payload + [0])) }
        // A later version may append fields to hello; this one reads what it knows: the head, the first of them
        // (`Hello.head`), and nothing after it.
        let withHead = Message.hello(Hello(versions: 1...2, deviceName: "phone", storeID: "5f1c2a", physicalMillis: 1_732_886_400_000,
                                           resume: nil, head: 1042))
        let hello = MessageCodec.frame(withHead)
        #expect(try MessageCodec.decode(Frame(type: hello.type, payload: hello.payload + [1, 2, 3])) == withHead)
        // A head that does not read as one (a varint cut short) is absent, not malformed.
        let original = MessageCodec.frame(Self.samples[0])
        #expect(try MessageCodec.decode(Frame(type: original.type, payload: original.payload + [0xff])) == Self.samples[0])
    }

    @Test func unknownTypesAreAnErrorUnlessOptional() throws {
        #expect(throws: MessageError.unknownType(0x09)) { try MessageCodec.decode(Frame(type: 0x09, payload: [])) }
        #expect(throws: MessageError.unknownType(0x00)) { try MessageCodec.decode(Frame(type: 0x00, payload: [])) }
        #expect(try MessageCodec.decode(Frame(type: 0x80, payload: [1, 2])) == nil)
        #expect(try MessageCodec.decode(Frame(type: 0xFF, payload: [])) == nil)
    }

    @Test func anOptionalMessageIsIgnoredByASession() {
        let node = ReplicationNode("b", index: 1)
        var session = PeerSession(peer: ReplicationFixtures.device(0), deviceName: "b")
        _ = session.start(at: .both(0), store: node.store)
        let outputs = session.receive(frame: Frame(type: 0x90, payload: [1]), at: .both(0), store: node.store)
        #expect(outputs == [.log("peer=\(ReplicationFixtures.device(0).short) event=ignored type=0x90 why=optional-unknown (logged once per session)")])
        #expect(session.phase == .handshaking)
        // A flood of them is ignored quietly: one line per type per session.
        for _ in 0..<1000 { #expect(session.receive(frame: Frame(type: 0x90, payload: [1]), at: .both(0), store: node.store).isEmpty) }
        #expect(session.receive(frame: Frame(type: 0x91, payload: []), at: .both(0), store: node.store).count == 1)
    }

    @Test func batchesMustBeOrderedAndInRange() {
        func batchFrame(after: Int64, through: Int64, sequences: [Int64]) -> Frame {
            let changes = sequences.map { Change(sequence: $0, entry: ReplicationFixtures.entry("k\($0)", .int(1), wall: 1)) }
            return MessageCodec.frame(.changes(ChangeBatch(after: after, through: through, changes: changes)))
        }
        #expect(throws: Never.self) { try MessageCodec.decode(batchFrame(after: 1, through: 9, sequences: [2, 5, 9])) }
        #expect(throws: MessageError.self) { try MessageCodec.decode(batchFrame(after: 5, through: 4, sequences: [])) }
        #expect(throws: MessageError.self) { try MessageCodec.decode(batchFrame(after: 1, through: 9, sequences: [5, 5])) }
        #expect(throws: MessageError.self) { try MessageCodec.decode(batchFrame(after: 1, through: 9, sequences: [1])) }
        #expect(throws: MessageError.self) { try MessageCodec.decode(batchFrame(after: 1, through: 9, sequences: [10])) }
    }

    @Test func helloFieldsAreBounded() {
        let long = String(repeating: "x", count: Hello.maxLabelBytes + 1)
        let frame = MessageCodec.frame(.hello(Hello(versions: 1...1, deviceName: long, storeID: "s", physicalMillis: 0, resume: nil)))
        #expect(throws: MessageError.self) { try MessageCodec.decode(frame) }
        let reversed = Frame(type: 1, payload: [2, 1, 0, 0, 0, 0])  // versions 2...1
        #expect(throws: MessageError.self) { try MessageCodec.decode(reversed) }
        let zero = Frame(type: 1, payload: [0, 1, 0, 0, 0, 0])  // version 0 does not exist
        #expect(throws: MessageError.self) { try MessageCodec.decode(zero) }
    }

    @Test func versionNegotiationPicksTheHighestCommon() {
        #expect(ProtocolVersion.negotiate(1...3, 2...5) == 3)
        #expect(ProtocolVersion.negotiate(1...1, 1...1) == 1)
        #expect(ProtocolVersion.negotiate(1...2, 3...4) == nil)
        #expect(ProtocolVersion.negotiate(4...9, 1...4) == 4)
    }

    @Test(arguments: 0..<300) func randomPayloadsNeverCrash(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        let type = UInt8.random(in: 0...9, using: &rng)
        let payload = (0..<Int.random(in: 0..<80, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        _ = try? MessageCodec.decode(Frame(type: type, payload: payload))
    }
}
