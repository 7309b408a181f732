import Glibc

/// The real clock, for the shells only; the core takes time as a parameter.
public enum WallClock {
    @Sendable public static func nowMillis() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}
