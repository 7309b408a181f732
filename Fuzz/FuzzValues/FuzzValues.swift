import GroupSyncCore

/// libFuzzer target: value decoding (the format on disk and on the wire). A decoded value must re-encode
/// to bytes that decode to the same value, and the re-encoding must be canonical (encoding it again gives
/// the same bytes). Nothing may trap, however deep or long the input claims to be.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzValues(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let value = try? ValueCodec.decode(bytes) else { return 0 }
    let encoded = ValueCodec.encode(value)
    let again = try? ValueCodec.decode(encoded)
    precondition(again == value, "value does not survive a round trip")
    precondition(ValueCodec.encode(again!) == encoded, "encoding is not canonical")
    return 0
}
