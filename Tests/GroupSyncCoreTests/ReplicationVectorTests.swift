import FoundationEssentials
import Testing
@testable import GroupSyncCore

/// Checks this implementation against `Protocol/vectors/`, which an independent encoder wrote from the
/// specification: every valid vector encodes to exactly its bytes and decodes to exactly its meaning, and
/// every invalid one is refused with the stated kind of error.
@Suite struct ReplicationVectorTests {
    static let vectors = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Protocol/vectors")

    static func load(_ name: String) throws -> [String: Value] {
        let data = try Data(contentsOf: vectors.appendingPathComponent(name))
        guard case .dictionary(let document) = try JSONParser.parse(String(decoding: data, as: UTF8.self)) else {
            throw VectorError("\(name) is not a JSON object")
        }
        return document
    }

    static func list(_ document: [String: Value], _ key: String) -> [[String: Value]] {
        guard case .array(let items)? = document[key] else { return [] }
        return items.compactMap { if case .dictionary(let item) = $0 { item } else { nil } }
    }

    // MARK: Values

    @Test func values() throws {
        let document = try Self.load("values.json")
        let valid = Self.list(document, "valid"), invalid = Self.list(document, "invalid")
        #expect(valid.count >= 20 && invalid.count >= 10)
        for vector in valid {
            let name = try vector.string("name"), bytes = try vector.hex("hex")
            let meaning = try Self.typedValue(vector["value"])
            #expect(ValueCodec.encode(meaning) == bytes, "\(name): encoding")
            #expect(try ValueCodec.decode(bytes) == meaning, "\(name): decoding")
        }
        let deep = Self.list(document, "deep")
        #expect(deep.count >= 2)
        for vector in deep {
            let name = try vector.string("name"), bytes = try vector.hex("hex")
            #expect(ValueCodec.encode(try ValueCodec.decode(bytes)) == bytes, "\(name)")
        }
        for vector in invalid {
            let name = try vector.string("name"), expected = try vector.string("error"), bytes = try vector.hex("hex")
            do throws(DecodingError) {
                let value = try ValueCodec.decode(bytes)
                Issue.record("\(name): decoded \(value) but must be refused")
            } catch {
                #expect((error == .truncated ? "truncated" : "malformed") == expected, "\(name): \(error)")
            }
        }
    }

    /// A dictionary's bytes do not depend on the process: its keys are ordered by their bytes, which Swift's
    /// `<` does not give for keys mixing precomposed and decomposed letters (each process then had its own
    /// order, from its hash seed). Built in many insertion orders, the value always encodes alike.
    @Test func dictionaryKeysMixingNormalizationFormsEncodeAlikeInAnyOrder() throws {
        let keys = ["e\u{301}", "e", "ea", "e\u{301}a", "\u{e9}b", "f", "\u{e9}c", "e\u{301}\u{301}"]
        var generator = SeededGenerator(seed: 7)
        let reference = ValueCodec.encode(.dictionary(Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, Value.int(Int64($0))) })))
        for _ in 0..<200 {
            var dictionary: [String: Value] = [:]
            for (index, key) in keys.enumerated().shuffled(using: &generator) { dictionary[key] = .int(Int64(index)) }
            #expect(ValueCodec.encode(.dictionary(dictionary)) == reference)
        }
        // Key by key, the order of the bytes.
        var reader = ByteReader(reference)
        _ = try reader.readByte()
        var written: [[UInt8]] = []
        for _ in 0..<(try reader.readLength()) {
            written.append(Array(try reader.readString().utf8))
            _ = try ValueCodec.decode(from: &reader)
        }
        #expect(written == written.sorted { $0.lexicographicallyPrecedes($1) } && written.count == keys.count)
    }

    // MARK: Device IDs

    @Test func deviceIDs() throws {
        let document = try Self.load("identity.json")
        let valid = Self.list(document, "valid"), invalid = Self.list(document, "invalid")
        #expect(valid.count >= 4 && invalid.count >= 2)
        for vector in valid {
            let name = try vector.string("name"), text = try vector.string("text")
            let id = try DeviceID(bytes: try vector.hex("bytes"))
            #expect(id.description == text, "\(name)")
            #expect(try DeviceID(parsing: text) == id, "\(name)")
            #expect(try DeviceID(parsing: text.lowercased().filter { $0 != "-" }) == id, "\(name): case and dashes")
        }
        for vector in invalid {
            let name = try vector.string("name")
            #expect(throws: DeviceIDError.self, "\(name)") { try DeviceID(parsing: try vector.string("text")) }
        }
    }

    // MARK: Messages

    @Test func messages() throws {
        let document = try Self.load("messages.json")
        let valid = Self.list(document, "valid")
        #expect(Set(try valid.map { try $0.dictionary("message").string("type") }) == Set(MessageType.allCases.map(\.description)))
        for vector in valid {
            let name = try vector.string("name"), bytes = try vector.hex("hex")
            let meaning = try Self.message(try vector.dictionary("message"))
            #expect(MessageCodec.encode(meaning!) == bytes, "\(name): encoding")
            #expect(try Self.decodeFrame(bytes) == meaning, "\(name): decoding")
        }
        for vector in Self.list(document, "decodeOnly") {
            let name = try vector.string("name")
            #expect(try Self.decodeFrame(try vector.hex("hex")) == (try Self.message(try vector.dictionary("message"))), "\(name)")
        }
        for vector in Self.list(document, "invalid") {
            let name = try vector.string("name"), expected = try vector.string("error")
            do {
                let message = try Self.decodeFrame(try vector.hex("hex"))
                Issue.record("\(name): decoded \(String(describing: message)) but must be refused")
            } catch let error as MessageError {
                let kind = if case .unknownType = error { "unknownType" } else { "malformed" }
                #expect(kind == expected, "\(name): \(error)")
            }
        }
    }

    /// Version 2 `changes`: stored bodies are canonical (this encoder, with compression off, writes exactly
    /// them); deflated ones only decode, since another deflater may choose other bytes.
    @Test func compactMessages() throws {
        let version = ProtocolVersion.compactBatches
        let document = try Self.load("messages-v2.json")
        let valid = Self.list(document, "valid"), decodeOnly = Self.list(document, "decodeOnly"), invalid = Self.list(document, "invalid")
        #expect(valid.count >= 5 && decodeOnly.count >= 3 && invalid.count >= 15)
        for vector in valid {
            let name = try vector.string("name"), bytes = try vector.hex("hex")
            guard case .changes(let batch)? = try Self.message(try vector.dictionary("message")) else { throw VectorError("\(name): not changes") }
            var encoder = ChangeBatchEncoder(version: version, after: batch.after, compression: .never)
            for change in batch.changes {
                let fits = encoder.append(change)
                #expect(fits, "\(name)")
            }
            #expect(Frame(type: MessageType.changes.rawValue, payload: encoder.payload(through: batch.through)).encoded == bytes, "\(name): encoding")
            #expect(try Self.decodeFrame(bytes, version: version) == .changes(batch), "\(name): decoding")
            // And whatever this encoder sends by default decodes to the same batch.
            #expect(try Self.decodeFrame(MessageCodec.encode(.changes(batch), version: version), version: version) == .changes(batch), "\(name): default encoding")
        }
        for vector in decodeOnly {
            let name = try vector.string("name")
            #expect(try Self.decodeFrame(try vector.hex("hex"), version: version) == (try Self.message(try vector.dictionary("message"))), "\(name)")
        }
        for vector in invalid {
            let name = try vector.string("name")
            do {
                let message = try Self.decodeFrame(try vector.hex("hex"), version: version)
                Issue.record("\(name): decoded \(String(describing: message)) but must be refused")
            } catch let error as MessageError {
                guard case .malformed(.changes, _) = error else {
                    Issue.record("\(name): refused as \(error), not as a malformed changes message")
                    continue
                }
            }
        }
    }

    /// Splits the bytes with the real frame decoder: a vector is exactly one frame.
    static func decodeFrame(_ bytes: [UInt8], version: UInt32 = ProtocolVersion.original) throws -> Message? {
        var decoder = FrameDecoder()
        let frames = try decoder.feed(bytes)
        guard frames.count == 1, decoder.bufferedByteCount == 0 else { throw VectorError("not exactly one frame") }
        return try MessageCodec.decode(frames[0], version: version)
    }

    // MARK: Frames

    @Test func frames() throws {
        let document = try Self.load("frames.json")
        guard case .int(let limit)? = document["maxFrameBytes"] else { throw VectorError("maxFrameBytes missing") }
        #expect(Int(limit) == Frame.defaultMaxBytes)
        for vector in Self.list(document, "valid") {
            let name = try vector.string("name")
            var decoder = FrameDecoder(maxFrameBytes: Int(limit))
            let expected = try Self.list(vector, "frames").map { Frame(type: UInt8(try $0.int("type")), payload: try $0.hex("payload")) }
            #expect(try decoder.feed(try vector.hex("hex")) == expected, "\(name)")
            #expect(expected.flatMap(\.encoded) == (try vector.hex("hex")), "\(name): encoding")
        }
        for vector in Self.list(document, "invalid") {
            let name = try vector.string("name"), expected = try vector.string("error")
            let bytes = try vector.hex("hex")
            var decoder = FrameDecoder(maxFrameBytes: Int(limit))
            // Byte by byte, so the refusal is seen to come as soon as the header is complete.
            var frames = 0
            var failure: FrameError?
            for (index, byte) in bytes.enumerated() {
                do { frames += try decoder.feed([byte]).count } catch {
                    failure = error
                    #expect(index == bytes.count - 1, "\(name): refused at byte \(index), not at the end of the header")
                    break
                }
            }
            let kind = switch failure { case .empty?: "empty"; case .oversize?: "oversize"; case nil: "none" }
            #expect(kind == expected, "\(name)")
            #expect(frames == (try vector.int("framesBefore")), "\(name)")
        }
    }

    // MARK: Meanings

    /// `{"int": 5}`, `{"data": "00ff"}`, `{"array": [...]}`… → `Value`.
    static func typedValue(_ json: Value?) throws -> Value {
        guard case .dictionary(let typed)? = json, typed.count == 1, let (kind, payload) = typed.first else {
            throw VectorError("a typed value is an object with one key, got \(String(describing: json))")
        }
        switch (kind, payload) {
        case ("string", .string(let s)): return .string(s)
        case ("int", .int(let i)): return .int(i)
        case ("double", .double(let d)): return .double(d)
        case ("double", .int(let i)): return .double(Double(i))
        case ("bool", .bool(let b)): return .bool(b)
        case ("date", .double(let d)): return .date(d)
        case ("date", .int(let i)): return .date(Double(i))
        case ("data", .string(let hex)): return .data(try hexBytes(hex))
        case ("array", .array(let items)): return .array(try items.map { try typedValue($0) })
        case ("dictionary", .dictionary(let dict)): return .dictionary(try dict.mapValues { try typedValue($0) })
        default: throw VectorError("unknown typed value \(kind)")
        }
    }

    /// The JSON meaning of a message; `nil` for `{"type": "ignored"}` (an optional type).
    static func message(_ m: [String: Value]) throws -> Message? {
        switch try m.string("type") {
        case "ignored": return nil
        case "hello":
            let resume: Watermark? = if case .dictionary(let r)? = m["resume"] {
                Watermark(storeID: try r.string("storeID"), sequence: try r.int("sequence"))
            } else { nil }
            return .hello(Hello(versions: UInt32(try m.int("minVersion"))...UInt32(try m.int("maxVersion")),
                                deviceName: try m.string("deviceName"), storeID: try m.string("storeID"),
                                physicalMillis: try m.int("physicalMillis"), resume: resume,
                                head: m["head"] == nil ? nil : try m.int("head")))
        case "changes":
            let changes = try list(m, "changes").map { c in
                let value: Value? = c["tombstone"] == .bool(true) ? nil : try typedValue(c["value"])
                let origin = try DeviceID(bytes: try c.hex("origin"))
                let hlc = HLC(wallMillis: try c.int("hlcWall"), logical: UInt32(try c.int("hlcLogical")))
                return Change(sequence: try c.int("sequence"),
                              entry: Entry(suite: try c.string("suite"), key: try c.string("key"), value: value, version: Version(hlc: hlc, origin: origin)))
            }
            return .changes(ChangeBatch(after: try m.int("after"), through: try m.int("through"), changes: changes))
        case "ack": return .ack(sequence: try m.int("sequence"))
        case "request": return .request(after: try m.int("after"))
        case "ping": return .ping(millis: try m.int("millis"))
        case "pong": return .pong(echoMillis: try m.int("echoMillis"), millis: try m.int("millis"))
        case "goodbye": return .goodbye(ReasonCode(rawValue: UInt64(try m.int("code"))), try m.string("text"))
        case "error": return .error(ReasonCode(rawValue: UInt64(try m.int("code"))), try m.string("text"))
        case let other: throw VectorError("unknown message type \(other)")
        }
    }

    static func hexBytes(_ hex: String) throws -> [UInt8] {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { throw VectorError("odd-length hex") }
        return try stride(from: 0, to: digits.count, by: 2).map { i in
            guard let byte = UInt8(String(decoding: digits[i..<(i + 2)], as: UTF8.self), radix: 16) else { throw VectorError("bad hex \(hex)") }
            return byte
        }
    }
}

struct VectorError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

private extension Dictionary where Key == String, Value == GroupSyncCore.Value {
    func string(_ key: String) throws -> String {
        guard case .string(let s)? = self[key] else { throw VectorError("'\(key)' is not a string") }
        return s
    }

    func int(_ key: String) throws -> Int64 {
        guard case .int(let i)? = self[key] else { throw VectorError("'\(key)' is not an integer") }
        return i
    }

    func hex(_ key: String) throws -> [UInt8] { try ReplicationVectorTests.hexBytes(try string(key)) }

    func dictionary(_ key: String) throws -> [String: GroupSyncCore.Value] {
        guard case .dictionary(let d)? = self[key] else { throw VectorError("'\(key)' is not an object") }
        return d
    }
}
