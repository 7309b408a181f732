import GroupSyncCore

/// libFuzzer target: the frame decoder, fed the input in chunks the input itself chooses. Every frame it
/// returns must re-encode to bytes that decode to the same frame, and nothing may trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrames(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    // A small limit, so the oversize path is as reachable as the happy one.
    var decoder = FrameDecoder(maxFrameBytes: 1 + Int(first) * 64)
    var rest = bytes.dropFirst()
    var chunk = max(1, Int(first % 17))
    while !rest.isEmpty {
        let piece = rest.prefix(chunk)
        rest = rest.dropFirst(piece.count)
        chunk = chunk % 13 + 1
        do {
            for frame in try decoder.feed(piece) {
                var again = FrameDecoder(maxFrameBytes: decoder.maxFrameBytes)
                let decoded = try again.feed(frame.encoded)
                precondition(decoded == [frame], "frame does not survive a round trip")
            }
        } catch {
            // A framing error: the decoder must stay failed.
            precondition((try? decoder.feed([0, 0, 0, 1, 1])) == nil, "a failed decoder accepted more bytes")
            return 0
        }
    }
    return 0
}
