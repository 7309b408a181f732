/// Order statistics over samples; every figure in the report is a median of runs.
enum Stats {
    static func median(_ values: [Double]) -> Double { percentile(values, 50) }

    /// Nearest-rank percentile (p in 0...100): the smallest sample with at least p% of samples at or below it.
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}
