/// Which revisions of the wire protocol a peer speaks. Both peers send their range in `hello` and both
/// independently pick the highest version in common, so no extra round trip is needed to agree.
public enum ProtocolVersion {
    /// Version 1: every change of a `changes` batch carries its suite, origin, sequence and time in full.
    public static let original: UInt32 = 1
    /// Version 2: `changes` batches share tables of suites and origins, write sequences and times as
    /// differences, and may be deflated (`Protocol/PROTOCOL.md` §5.2.2). Every other message is as in 1.
    public static let compactBatches: UInt32 = 2

    /// The versions this implementation speaks: it still talks to peers that only offer version 1.
    public static let supported: ClosedRange<UInt32> = original...compactBatches

    /// The highest version both ranges contain, or `nil` when they do not overlap.
    public static func negotiate(_ local: ClosedRange<UInt32>, _ peer: ClosedRange<UInt32>) -> UInt32? {
        let highest = min(local.upperBound, peer.upperBound)
        return highest >= max(local.lowerBound, peer.lowerBound) ? highest : nil
    }
}
