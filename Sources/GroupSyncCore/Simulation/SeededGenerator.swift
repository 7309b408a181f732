/// SplitMix64: a tiny deterministic generator, so a simulation (and every randomized test) replays exactly
/// from its seed. Never seeded from the system: the seed is the whole story.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// True with probability `p` (0 and below: never; 1 and above: always).
    public mutating func chance(_ p: Double) -> Bool {
        p > 0 && Double.random(in: 0..<1, using: &self) < p
    }

    /// Milliseconds until the next event of a Poisson process with `perMinute` events per minute, or `nil`
    /// when the rate is 0.
    public mutating func exponentialMillis(perMinute: Double) -> Int64? {
        guard perMinute > 0 else { return nil }
        let u = Double.random(in: Double.ulpOfOne..<1, using: &self)
        return max(1, Int64(-Foundationless.log(u) / perMinute * 60_000))
    }
}

/// `log` without Foundation: the core stays free of it.
enum Foundationless {
    static func log(_ x: Double) -> Double {
        // ln(x) = 2 atanh((x-1)/(x+1)), by its series after scaling x into [0.5, 1) by powers of two.
        precondition(x > 0)
        var exponent = 0
        var m = x
        while m >= 1 { m /= 2; exponent += 1 }
        while m < 0.5 { m *= 2; exponent -= 1 }
        let y = (m - 1) / (m + 1), y2 = y * y
        var term = y, sum = 0.0, k = 1.0
        while abs(term / k) > 1e-17 {
            sum += term / k
            term *= y2
            k += 2
        }
        return 2 * sum + Double(exponent) * 0.693_147_180_559_945_3
    }
}
