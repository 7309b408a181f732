/// Splits a byte stream into frames, whatever the chunking of the transport.
///
/// It holds at most one incomplete frame (bounded by `maxFrameBytes` plus the header), and judges the length
/// as soon as the 4-byte header is in, so an oversize announcement costs nothing. After an error the
/// decoder stays failed: the stream's alignment is lost and later bytes mean nothing.
public struct FrameDecoder: Sendable {
    public let maxFrameBytes: Int
    private var buffer: [UInt8] = []
    private var failure: FrameError?

    public init(maxFrameBytes: Int = Frame.defaultMaxBytes) {
        precondition(maxFrameBytes >= Frame.typeBytes, "a frame needs room for its type byte")
        self.maxFrameBytes = maxFrameBytes
    }

    /// Bytes received that do not yet form a complete frame.
    public var bufferedByteCount: Int { buffer.count }

    /// Adds received bytes; returns the frames they complete, in order.
    public mutating func feed(_ bytes: some Collection<UInt8>) throws(FrameError) -> [Frame] {
        if let failure { throw failure }
        var frames: [Frame] = []
        var chunk = bytes[...]
        while !chunk.isEmpty {
            // Take only what the current frame needs, so the buffer never holds more than one frame even
            // when a chunk carries many.
            let need = try bytesNeeded()
            let take = chunk.prefix(need)
            buffer.append(contentsOf: take)
            chunk = chunk.dropFirst(take.count)
            if let frame = try completeFrame() { frames.append(frame) }
        }
        // A header alone may already be refusable; check it now rather than on the next feed.
        _ = try bytesNeeded()
        return frames
    }

    /// How many more bytes the frame being assembled needs.
    private mutating func bytesNeeded() throws(FrameError) -> Int {
        guard buffer.count >= Frame.headerBytes else { return Frame.headerBytes - buffer.count }
        return Frame.headerBytes + (try announcedLength()) - buffer.count
    }

    private mutating func announcedLength() throws(FrameError) -> Int {
        let length = buffer.prefix(Frame.headerBytes).reduce(UInt32(0)) { ($0 << 8) | UInt32($1) }
        guard length != 0 else { return try fail(.empty) }
        guard Int(length) <= maxFrameBytes else { return try fail(.oversize(length: length, maxBytes: maxFrameBytes)) }
        return Int(length)
    }

    private mutating func completeFrame() throws(FrameError) -> Frame? {
        guard buffer.count >= Frame.headerBytes, buffer.count == Frame.headerBytes + (try announcedLength()) else { return nil }
        let frame = Frame(type: buffer[Frame.headerBytes], payload: Array(buffer[(Frame.headerBytes + Frame.typeBytes)...]))
        // Keep a small buffer for the next frame; give a large one back rather than hold it while idle.
        buffer.removeAll(keepingCapacity: buffer.count <= 64 * 1024)
        return frame
    }

    private mutating func fail(_ error: FrameError) throws(FrameError) -> Int {
        failure = error
        buffer = []
        throw error
    }
}
