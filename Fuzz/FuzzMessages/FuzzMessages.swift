import GroupSyncCore

/// libFuzzer target: the message parser and the handshake. The input is a byte stream from a peer: every
/// frame in it is decoded in every protocol version (a message must survive re-encoding in that version,
/// deflated or not), and the whole stream is fed to a real `PeerSession` over an in-memory store, from its
/// first `hello` on (which picks the version the rest is read in). Nothing may trap; a session may only
/// end with a reason.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMessages(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var decoder = FrameDecoder()
    if let frames = try? decoder.feed(bytes) {
        for frame in frames {
            for version in ProtocolVersion.supported {
                guard let message = (try? MessageCodec.decode(frame, version: version)) ?? nil else { continue }
                let again = try? MessageCodec.decode(MessageCodec.frame(message, version: version), version: version)
                precondition(again == message, "\(message.type) does not survive a round trip in version \(version)")
            }
        }
    }

    let store = MemoryReplicaStore(device: Fixtures.local, storeID: "fuzz-store")
    store.set(.string("local"), suite: "s", key: "k", physicalMillis: Fixtures.now)
    var session = PeerSession(peer: Fixtures.peer, deviceName: "fuzz")
    // The monotonic clock counts from an arbitrary origin, nothing like the wall clock's.
    func at(_ elapsed: Int64) -> SessionTime { SessionTime(monotonicMillis: 5_000 + elapsed, wallMillis: Fixtures.now + elapsed) }
    _ = session.start(at: at(0), store: store)
    // Arrives in two pieces, as a transport may deliver it; then time passes.
    let cut = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
    _ = session.receive(bytes: bytes[..<cut], at: at(0), store: store)
    _ = session.receive(bytes: bytes[cut...], at: at(1), store: store)
    _ = session.localChangesAvailable(at: at(2), store: store)
    _ = session.tick(at: at(100_000))
    return 0
}

enum Fixtures {
    static let now: Int64 = 1_732_886_400_000
    static let local = try! DeviceID(bytes: Array(repeating: 1, count: 32))
    static let peer = try! DeviceID(bytes: Array(repeating: 2, count: 32))
}
