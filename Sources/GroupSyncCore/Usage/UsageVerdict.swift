/// Which threshold events of one monitor are genuine usage, after the seed's two phantom guards.
///
/// On iOS 26, `eventDidReachThreshold` sometimes fires with no real use: right after the monitor is
/// armed, or when a phone that sat locked is picked up. The balance must not believe those (seed,
/// section 8), and the two facts below do most of the work.
public struct UsageVerdict: Equatable, Sendable {
    /// The monitor's usage: the genuine steps of its thresholds (thresholds are cumulative, never summed).
    public var usedMs: Int64
    /// Events dropped by guard 1, by name.
    public var tooEarly: Set<String>
    /// Events guard 2 found in a phantom burst, by name.
    public var phantom: Set<String>
    /// When the latest genuine threshold fired (epoch ms), 0 if none did: the usage happened by then.
    public var latestAt: Int64
    /// Whether guard 2 found any phantom burst among the monitor's events.
    public var phantomBurst: Bool { !phantom.isEmpty }

    /// Why an event counts or not. The raw values are what `usage record --json` prints as `reason`.
    public enum Reason: String, Sendable {
        case genuine
        /// Guard 1: fired before its usage could have run since the arming.
        case tooEarly = "too-early"
        /// Guard 2: part of a burst of thresholds in one instant.
        case phantomBurst = "phantom-burst"
    }

    public func reason(for event: String) -> Reason {
        if phantom.contains(event) { return .phantomBurst }
        if tooEarly.contains(event) { return .tooEarly }
        return .genuine
    }

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
        // Guard 2: real usage arrives a little at a time, phantoms all at once. Thresholds a minute or more
        // of usage apart that fired within about 3 s did not happen: the whole burst spends nothing.
        phantom = Self.bursts(in: plausible)
        // Thresholds are cumulative, so usage is the sum of the steps between consecutive thresholds, less
        // the steps up to a phantom one. A burst keeps spending nothing when genuine thresholds follow it:
        // only the usage above the burst's top counts (comparing only the lowest and highest thresholds, one
        // real step 15 s later would have made the whole burst look genuine).
        var used: Int64 = 0, previous: Int64 = 0, latest: Int64 = 0
        for event in plausible.sorted(by: { ($0.usedMs, $0.at, $0.event) < ($1.usedMs, $1.at, $1.event) }) {
            if !phantom.contains(event.event) {
                used += event.usedMs - previous
                latest = max(latest, event.at)
            }
            previous = event.usedMs
        }
        usedMs = used
        latestAt = latest
    }

    /// Every event in a window of `burstWindowMs` whose thresholds span `burstSpanMs` or more: one pass over
    /// the events in time order, the window's lowest and highest thresholds kept in monotonic queues, so a
    /// monitor with many events costs linear time.
    static func bursts(in events: [FiredThreshold]) -> Set<String> {
        let byTime = events.sorted { ($0.at, $0.usedMs, $0.event) < ($1.at, $1.usedMs, $1.event) }
        var phantom = Set<String>()
        var lows: [Int] = [], highs: [Int] = []   // indices; thresholds increasing / decreasing
        var lowHead = 0, highHead = 0, end = 0, markedUpTo = 0
        for start in byTime.indices {
            while end < byTime.count && byTime[end].at - byTime[start].at <= burstWindowMs {
                while lows.count > lowHead && byTime[lows.last!].usedMs >= byTime[end].usedMs { lows.removeLast() }
                lows.append(end)
                while highs.count > highHead && byTime[highs.last!].usedMs <= byTime[end].usedMs { highs.removeLast() }
                highs.append(end)
                end += 1
            }
            while lows[lowHead] < start { lowHead += 1 }
            while highs[highHead] < start { highHead += 1 }
            if byTime[highs[highHead]].usedMs - byTime[lows[lowHead]].usedMs >= burstSpanMs {
                for index in max(start, markedUpTo)..<end { phantom.insert(byTime[index].event) }
                markedUpTo = max(markedUpTo, end)
            }
        }
        return phantom
    }
}
