import CZlib

/// Raw deflate (RFC 1951) of whole buffers, for the bodies of version 2 `changes` messages.
///
/// zlib is the core's one C dependency, and only computes: no I/O, no clocks, the same output for the same
/// input. The `z_stream` handling stays in `Sources/CZlib/shim.h`; this file only lends it buffers.
enum RawDeflate {
    /// Levels: 1 is zlib's fastest, 6 its default. `ChangeBatchEncoder.payload` picks one by body size.
    static let fastestLevel: Int32 = 1
    static let defaultLevel: Int32 = 6

    /// `input` deflated, or `nil` when the result would not be shorter than `limit` bytes: the caller
    /// then sends the bytes stored, so an incompressible body never grows.
    static func compress(_ input: [UInt8], level: Int32, shorterThan limit: Int) -> [UInt8]? {
        guard limit > 1, !input.isEmpty else { return nil }
        // The smallest window that covers the input: less memory to set up for a small batch, same stream.
        var windowBits: Int32 = 9
        while windowBits < 15 && (1 << windowBits) < input.count { windowBits += 1 }
        let capacity = limit - 1
        let output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            initialized = input.withUnsafeBufferPointer { source in
                gs_deflate_raw(source.baseAddress, source.count, buffer.baseAddress, capacity, level, windowBits)
            }
        }
        return output.isEmpty ? nil : output
    }

    /// Inflates `input` into exactly `count` bytes. The declared `count` bounds both the allocation and the
    /// work, so a decompression bomb is refused after producing at most `count` bytes.
    static func decompress(_ input: ArraySlice<UInt8>, count: Int) throws(DecodingError) -> [UInt8] {
        var status: Int32 = 0
        let output = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            status = input.withUnsafeBufferPointer { source in
                gs_inflate_raw(source.baseAddress, source.count, buffer.baseAddress, count)
            }
            // Only a complete inflate initialized every byte; otherwise nothing is kept.
            initialized = Int(status) == GS_INFLATE_OK ? count : 0
        }
        switch Int(status) {
        case GS_INFLATE_OK: return output
        case GS_INFLATE_CORRUPT: throw .malformed("the deflated body is not a valid deflate stream")
        case GS_INFLATE_TOO_LONG: throw .malformed("the deflated body inflates to more than its declared \(count) bytes")
        case GS_INFLATE_TRUNCATED: throw .malformed("the deflated body ends before its deflate stream does")
        case GS_INFLATE_TRAILING: throw .malformed("bytes follow the end of the deflate stream")
        case GS_INFLATE_TOO_SHORT: throw .malformed("the deflated body inflates to fewer than its declared \(count) bytes")
        default: throw .malformed("the deflated body could not be inflated: out of memory")
        }
    }
}
