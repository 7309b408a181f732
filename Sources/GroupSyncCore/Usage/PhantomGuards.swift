/// Which threshold events of one monitor are genuine usage, after the seed's two phantom guards.
///
/// On iOS 26, `eventDidReachThreshold` sometimes fires with no real use: right after the monitor is
/// armed, or when a phone that sat locked is picked up. The balance must not believe those (seed,
/// section 8), and the two facts below do most of the work.
public struct UsageVerdict: Equatable, Sendable {
    /// The monitor's usage: its highest genuine threshold (thresholds are cumulative, never summed).
    public var usedMs: Int64
    /// Events dropped by guard 1, by name.
    public var tooEarly: Set<String>
    /// Whether guard 2 declared the whole lot a phantom burst.
    public var phantomBurst: Bool

    /// Guard 1 slack: a genuine `used-N` may fire up to this much before `armedAt + N`.
    public static let earlySlackMs: Int64 = 5_000
    /// Guard 2: thresholds at least this far apart in usage…
    public static let burstSpanMs: Int64 = 60_000
    /// …that fired within this much wall time of each other are one phantom burst.
    public static let burstWindowMs: Int64 = 3_000

    public init(events: [FiredThreshold], armedAt: Int64) {
        // Guard 1: usage cannot run faster than the clock. `used-7` cannot genuinely fire less than
        // 7 minutes after the monitor was armed (5 s of slack for the monitor's own rounding).
        let early = events.filter { $0.at < armedAt + $0.usedMs - Self.earlySlackMs }
        tooEarly = Set(early.map(\.event))
        let plausible = events.filter { $0.at >= armedAt + $0.usedMs - Self.earlySlackMs }
        guard let lowest = plausible.min(by: { ($0.usedMs, $0.at) < ($1.usedMs, $1.at) }),
              let highest = plausible.max(by: { ($0.usedMs, -$0.at) < ($1.usedMs, -$1.at) }) else {
            usedMs = 0
            phantomBurst = false
            return
        }
        // Guard 2: real usage arrives a little at a time, phantoms all at once. When the lowest and
        // highest thresholds are a minute or more of usage apart yet fired within about 3 s, none of
        // it happened: the burst spends nothing.
        if highest.usedMs - lowest.usedMs >= Self.burstSpanMs && abs(highest.at - lowest.at) <= Self.burstWindowMs {
            usedMs = 0
            phantomBurst = true
            return
        }
        usedMs = highest.usedMs
        phantomBurst = false
    }
}
