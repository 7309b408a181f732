/// How far a time zone's local time is ahead of UTC at a given instant.
///
/// The core never reads `/usr/share/zoneinfo`: a shell reads the bytes and hands them to `TZifTimeZone`,
/// or a test builds a `POSIXTimeZoneRule` from a string, so daylight-saving days are testable purely.
public protocol UTCOffsetRule: Sendable {
    /// Seconds to add to UTC to get local time at `utcMillis` (e.g. +7200 for CEST).
    func utcOffsetSeconds(atUTCMillis utcMillis: Int64) -> Int64
}

/// A zone with one offset all year, such as UTC.
public struct FixedUTCOffset: UTCOffsetRule, Equatable {
    public let seconds: Int64

    public init(seconds: Int64) { self.seconds = seconds }

    public static let utc = FixedUTCOffset(seconds: 0)

    public func utcOffsetSeconds(atUTCMillis utcMillis: Int64) -> Int64 { seconds }
}
