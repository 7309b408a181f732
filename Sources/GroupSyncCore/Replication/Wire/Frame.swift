/// One unit on the wire: a message type byte and its payload.
///
/// Layout: a 4-byte big-endian length `L`, then `L` bytes: the type byte, then `L - 1` payload bytes.
/// The length comes first so a receiver can refuse an oversize frame before reading (or allocating) its body.
public struct Frame: Hashable, Sendable {
    public var type: UInt8
    public var payload: [UInt8]

    public init(type: UInt8, payload: [UInt8]) {
        self.type = type
        self.payload = payload
    }

    /// Bytes in the length field's count besides the payload: the type byte.
    public static let typeBytes = 1
    public static let headerBytes = 4
    /// Default bound on the length field: room for a batch of entries at the store's 1 MiB value limit,
    /// small enough that a hostile peer cannot make us hold much.
    public static let defaultMaxBytes = 4 * 1024 * 1024

    /// The frame as it goes on the wire.
    public var encoded: [UInt8] {
        var writer = ByteWriter(reservingCapacity: Self.headerBytes + Self.typeBytes + payload.count)
        writer.writeUInt32(UInt32(Self.typeBytes + payload.count))
        writer.write(type)
        writer.write(contentsOf: payload)
        return writer.bytes
    }
}

/// Why a byte stream cannot be split into frames. The stream has lost its alignment after any of these,
/// so the only recovery is a new connection.
public enum FrameError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The length field announces more than the receiver accepts.
    case oversize(length: UInt32, maxBytes: Int)
    /// A length of 0 has no room for the type byte.
    case empty

    public var description: String {
        switch self {
        case let .oversize(length, max):
            "frame of \(length) bytes exceeds the limit of \(max) bytes: the peer is misbehaving or runs an incompatible version"
        case .empty:
            "frame with length 0 (no message type): the peer is misbehaving or the stream is corrupt"
        }
    }
}
