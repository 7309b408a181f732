import Testing
@testable import GroupSyncCore

@Suite struct ReplicationFrameTests {
    static let frames = [
        Frame(type: 1, payload: []),
        Frame(type: 2, payload: Array(0..<200)),
        Frame(type: 0x85, payload: [9]),
        Frame(type: 3, payload: [UInt8](repeating: 0xAB, count: 70_000)),
    ]
    static let stream = frames.flatMap(\.encoded)

    @Test func layoutIsLengthThenTypeThenPayload() {
        #expect(Frame(type: 5, payload: [0xAA, 0xBB]).encoded == [0, 0, 0, 3, 5, 0xAA, 0xBB])
    }

    @Test func oneChunkWithManyFrames() throws {
        var decoder = FrameDecoder()
        #expect(try decoder.feed(Self.stream) == Self.frames)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func byteByByte() throws {
        var decoder = FrameDecoder()
        var out: [Frame] = []
        for byte in Self.stream { out += try decoder.feed([byte]) }
        #expect(out == Self.frames)
    }

    @Test(arguments: 0..<50) func randomChunks(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        var decoder = FrameDecoder()
        var out: [Frame] = []
        var rest = Self.stream[...]
        while !rest.isEmpty {
            let n = Int.random(in: 0...min(rest.count, 3_000), using: &rng)
            out += try decoder.feed(rest.prefix(n))
            rest = rest.dropFirst(n)
            #expect(decoder.bufferedByteCount <= 70_005, "seed \(seed)")
        }
        #expect(out == Self.frames, "seed \(seed)")
    }

    @Test func oversizeIsRefusedFromTheHeaderAlone() {
        var decoder = FrameDecoder(maxFrameBytes: 1_000)
        #expect(throws: FrameError.oversize(length: 1_001, maxBytes: 1_000)) { try decoder.feed([0, 0, 0x03, 0xE9]) }
        // The decoder stays failed: the stream's alignment is gone.
        #expect(throws: FrameError.oversize(length: 1_001, maxBytes: 1_000)) { try decoder.feed([1]) }
        #expect(decoder.bufferedByteCount == 0)

        var exact = FrameDecoder(maxFrameBytes: 1_000)
        #expect(throws: Never.self) { try exact.feed([0, 0, 0x03, 0xE8]) }
    }

    @Test func theDefaultLimitIsFourMebibytes() {
        var decoder = FrameDecoder()
        #expect(throws: FrameError.oversize(length: 4_194_305, maxBytes: 4_194_304)) { try decoder.feed([0x00, 0x40, 0x00, 0x01]) }
    }

    @Test func aZeroLengthFrameIsRefused() {
        var decoder = FrameDecoder()
        #expect(throws: FrameError.empty) { try decoder.feed([0, 0, 0, 0, 1, 2]) }
    }

    @Test func framesBeforeAnErrorAreDelivered() throws {
        var decoder = FrameDecoder(maxFrameBytes: 100)
        #expect(try decoder.feed(Frame(type: 1, payload: [7]).encoded + [0, 0]) == [Frame(type: 1, payload: [7])])
        #expect(throws: FrameError.self) { try decoder.feed([1, 0]) }
    }

    @Test(arguments: 0..<200) func garbageNeverCrashesAndNeverHoardsBytes(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        var decoder = FrameDecoder(maxFrameBytes: 512)
        for _ in 0..<20 {
            let chunk = (0..<Int.random(in: 0..<300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            do {
                for frame in try decoder.feed(chunk) { _ = try? MessageCodec.decode(frame) }
            } catch {
                break
            }
            #expect(decoder.bufferedByteCount <= 512 + Frame.headerBytes, "seed \(seed)")
        }
    }
}
