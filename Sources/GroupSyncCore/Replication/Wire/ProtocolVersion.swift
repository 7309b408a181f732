/// Which revisions of the wire protocol a peer speaks. Both peers send their range in `hello` and both
/// independently pick the highest version in common, so no extra round trip is needed to agree.
public enum ProtocolVersion {
    /// The versions this implementation speaks. Version 1 is the one `Protocol/PROTOCOL.md` describes.
    public static let supported: ClosedRange<UInt32> = 1...1

    /// The highest version both ranges contain, or `nil` when they do not overlap.
    public static func negotiate(_ local: ClosedRange<UInt32>, _ peer: ClosedRange<UInt32>) -> UInt32? {
        let highest = min(local.upperBound, peer.upperBound)
        return highest >= max(local.lowerBound, peer.lowerBound) ? highest : nil
    }
}
