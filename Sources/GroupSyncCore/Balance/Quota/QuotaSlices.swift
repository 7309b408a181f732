/// A set of slices of the daily quota: disjoint ranges of `0..<total`.
///
/// Each device owns some slices; its share of a day's allowance (or of its extension slots) is what
/// its slices cover. Shares are computed from range *boundaries* (`floor(amount × end / total) −
/// floor(amount × start / total)`), so the shares of any partition of the slices add up to exactly
/// the amount: no minute is lost to rounding however the slices are spread. `total` has every
/// divisor up to 16, so up to 16 devices get equal slices.
public struct QuotaSlices: Equatable, Sendable {
    public static let total: Int64 = 720_720
    public static let whole = QuotaSlices([0..<total])
    public static let none = QuotaSlices([])

    /// Sorted, disjoint, non-adjacent, non-empty.
    public private(set) var ranges: [Range<Int64>]

    public init(_ ranges: [Range<Int64>]) {
        self.ranges = []
        for range in ranges { formUnion(range) }
    }

    public var count: Int64 { ranges.reduce(0) { $0 + Int64($1.count) } }
    public var isEmpty: Bool { ranges.isEmpty }

    /// This set's part of `amount` (milliseconds, or extension slots).
    public func share(of amount: Int64) -> Int64 {
        ranges.reduce(0) { sum, r in
            sum + amount * r.upperBound / Self.total - amount * r.lowerBound / Self.total
        }
    }

    public mutating func formUnion(_ range: Range<Int64>) {
        let clamped = max(0, range.lowerBound)..<min(Self.total, max(range.upperBound, max(0, range.lowerBound)))
        guard !clamped.isEmpty else { return }
        var merged = clamped
        var kept: [Range<Int64>] = []
        for r in ranges {
            if r.upperBound < merged.lowerBound || r.lowerBound > merged.upperBound {
                kept.append(r)
            } else {
                merged = min(r.lowerBound, merged.lowerBound)..<max(r.upperBound, merged.upperBound)
            }
        }
        kept.append(merged)
        ranges = kept.sorted { $0.lowerBound < $1.lowerBound }
    }

    public mutating func subtract(_ range: Range<Int64>) {
        guard !range.isEmpty else { return }
        var kept: [Range<Int64>] = []
        for r in ranges {
            if r.upperBound <= range.lowerBound || r.lowerBound >= range.upperBound {
                kept.append(r)
                continue
            }
            if r.lowerBound < range.lowerBound { kept.append(r.lowerBound..<range.lowerBound) }
            if r.upperBound > range.upperBound { kept.append(range.upperBound..<r.upperBound) }
        }
        ranges = kept
    }

    /// The highest `n` slices of this set (all of it if it has fewer).
    public func top(_ n: Int64) -> QuotaSlices {
        var remaining = n
        var taken: [Range<Int64>] = []
        for r in ranges.reversed() where remaining > 0 {
            let size = min(remaining, Int64(r.count))
            taken.append((r.upperBound - size)..<r.upperBound)
            remaining -= size
        }
        return QuotaSlices(taken)
    }
}
