/// A hybrid logical clock timestamp (Kulkarni et al., 2014): physical milliseconds since 1970 plus a
/// logical counter that orders events sharing a millisecond or arriving from a clock that runs ahead.
/// It stays close to wall time (so "last writer" means what a user expects) while never going backwards.
public struct HLC: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var wallMillis: Int64
    public var logical: UInt32

    public init(wallMillis: Int64, logical: UInt32 = 0) {
        self.wallMillis = wallMillis
        self.logical = logical
    }

    public static let zero = HLC(wallMillis: 0, logical: 0)

    public static func < (lhs: HLC, rhs: HLC) -> Bool {
        (lhs.wallMillis, lhs.logical) < (rhs.wallMillis, rhs.logical)
    }

    /// `wallMillis.logical`, e.g. `1732886400000.3`: sortable by eye and parseable.
    public var description: String { "\(wallMillis).\(logical)" }

    public init?(parsing text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let wall = Int64(parts[0]), let logical = UInt32(parts[1]), wall >= 0 else { return nil }
        self.init(wallMillis: wall, logical: logical)
    }
}
