/// The version of one write: when (HLC) and where (origin device). Versions are totally ordered:
/// by HLC, then by origin ID bytes, so two devices writing in the same logical instant still agree on
/// one winner without talking to each other.
public struct Version: Hashable, Comparable, Sendable {
    public var hlc: HLC
    public var origin: DeviceID

    public init(hlc: HLC, origin: DeviceID) {
        self.hlc = hlc
        self.origin = origin
    }

    public static func < (lhs: Version, rhs: Version) -> Bool {
        if lhs.hlc != rhs.hlc { return lhs.hlc < rhs.hlc }
        return lhs.origin < rhs.origin
    }
}
