/// Local days in one time zone: which day an instant falls on, and when a day starts and ends.
///
/// A local day is not always 24 hours: the day daylight-saving time starts has 23, the day it ends 25.
/// Everything that expires "at the end of the user's day" (the daily allowance, puzzle extensions)
/// asks this type, never `86_400_000`.
public struct LocalCalendar: Sendable {
    public let rule: any UTCOffsetRule

    public init(rule: any UTCOffsetRule) { self.rule = rule }

    public static let utc = LocalCalendar(rule: FixedUTCOffset.utc)

    /// The local date at `utcMillis`.
    public func day(atUTCMillis utcMillis: Int64) -> CivilDate {
        let local = utcMillis + rule.utcOffsetSeconds(atUTCMillis: utcMillis) * 1000
        return CivilDate(ordinal: floorDiv(local, 86_400_000))
    }

    /// The first instant (UTC ms) whose local date is `day`.
    public func start(of day: CivilDate) -> Int64 {
        // Local midnight read as UTC is within a day and a bit of the answer; search that window
        // for the first instant on `day` (local dates only move forward across it in real zones).
        let naive = day.ordinal * 86_400_000
        var low = naive - 2 * 86_400_000, high = naive + 2 * 86_400_000
        while low < high {
            let mid = low + (high - low) / 2
            if self.day(atUTCMillis: mid) >= day { high = mid } else { low = mid + 1 }
        }
        return low
    }

    /// The first instant of the next day: when everything issued for `day` expires.
    public func end(of day: CivilDate) -> Int64 { start(of: day.next) }

    /// 24 h, or 23 h / 25 h on the days clocks change.
    public func lengthMillis(of day: CivilDate) -> Int64 { end(of: day) - start(of: day) }
}
