import Foundation
import Testing
@testable import GroupSyncCore

/// Replays every input kept in `Fuzz/regressions/<target>/` (a crash `make fuzz` found, copied there) through
/// the same checks as the libFuzzer targets in `Fuzz/`, so a fixed crash stays fixed in the ordinary test run.
@Suite struct FuzzRegressionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func inputs(_ target: String) -> [(String, [UInt8])] {
        let folder = root.appendingPathComponent("Fuzz/regressions/\(target)")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.sorted().compactMap { name in
            FileManager.default.contents(atPath: folder.appendingPathComponent(name).path).map { (name, Array($0)) }
        }
    }

    @Test func frameDecoderRegressions() {
        for (name, bytes) in Self.inputs("FuzzFrames") {
            guard let first = bytes.first else { continue }
            var decoder = FrameDecoder(maxFrameBytes: 1 + Int(first) * 64)
            var rest = bytes.dropFirst()
            var chunk = max(1, Int(first % 17))
            while !rest.isEmpty {
                let piece = rest.prefix(chunk)
                rest = rest.dropFirst(piece.count)
                chunk = chunk % 13 + 1
                guard let frames = try? decoder.feed(piece) else {
                    #expect((try? decoder.feed([0, 0, 0, 1, 1])) == nil, "\(name): a failed decoder accepted more bytes")
                    break
                }
                for frame in frames {
                    var again = FrameDecoder(maxFrameBytes: decoder.maxFrameBytes)
                    #expect((try? again.feed(frame.encoded)) == [frame], "\(name)")
                }
            }
        }
    }

    @Test func messageAndHandshakeRegressions() {
        for (name, bytes) in Self.inputs("FuzzMessages") {
            var decoder = FrameDecoder()
            for frame in (try? decoder.feed(bytes)) ?? [] {
                for version in ProtocolVersion.supported {
                    guard let message = (try? MessageCodec.decode(frame, version: version)) ?? nil else { continue }
                    #expect((try? MessageCodec.decode(MessageCodec.frame(message, version: version), version: version)) == message, "\(name) v\(version)")
                }
            }
            let now: Int64 = 1_732_886_400_000
            let store = MemoryReplicaStore(device: ReplicationFixtures.device(1), storeID: "fuzz-store")
            store.set(.string("local"), suite: "s", key: "k", physicalMillis: now)
            var session = PeerSession(peer: ReplicationFixtures.device(2), deviceName: "fuzz")
            _ = session.start(at: .both(now), store: store)
            let cut = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
            _ = session.receive(bytes: bytes[..<cut], at: .both(now), store: store)
            _ = session.receive(bytes: bytes[cut...], at: .both(now + 1), store: store)
            _ = session.tick(at: .both(now + 100_000))
        }
    }

    @Test func valueRegressions() {
        for (name, bytes) in Self.inputs("FuzzValues") {
            guard let value = try? ValueCodec.decode(bytes) else { continue }
            let encoded = ValueCodec.encode(value)
            #expect((try? ValueCodec.decode(encoded)) == value, "\(name)")
            #expect((try? ValueCodec.decode(encoded)).map(ValueCodec.encode) == encoded, "\(name): not canonical")
        }
    }
}
