/// Appends the primitives of GroupSync's binary encodings (values on disk, frames on the wire).
public struct ByteWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(reservingCapacity capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    public var count: Int { bytes.count }

    /// Drops what was written after the first `count` bytes: undoes an append that turned out not to fit.
    public mutating func truncate(to count: Int) { bytes.removeSubrange(count...) }

    public mutating func write(_ byte: UInt8) { bytes.append(byte) }
    public mutating func write<S: Sequence>(contentsOf sequence: S) where S.Element == UInt8 { bytes.append(contentsOf: sequence) }

    /// Unsigned LEB128: small lengths and counters cost one byte.
    public mutating func writeVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// Zig-zag then LEB128, so small negative numbers stay small.
    public mutating func writeSignedVarint(_ value: Int64) {
        writeVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    public mutating func writeUInt64(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    public mutating func writeUInt32(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    public mutating func writeLengthPrefixed(_ data: [UInt8]) {
        writeVarint(UInt64(data.count))
        bytes.append(contentsOf: data)
    }

    public mutating func writeString(_ string: String) { writeLengthPrefixed(Array(string.utf8)) }
}
