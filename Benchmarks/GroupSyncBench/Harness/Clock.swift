import Glibc

/// Time for measurements: the monotonic clock for intervals, the wall clock only to line up with daemon logs.
enum Clock {
    static func nanos() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    static func wallMillis() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    static func millis(since start: UInt64) -> Double { Double(nanos() &- start) / 1e6 }

    static func sleep(millis: Double) { usleep(UInt32(max(0, millis * 1000))) }
}

/// A deadline that fails a step loudly instead of letting the harness hang.
struct Deadline {
    let end: UInt64
    let what: String
    init(seconds: Double, _ what: String) {
        end = Clock.nanos() + UInt64(seconds * 1e9)
        self.what = what
    }
    var expired: Bool { Clock.nanos() > end }
    func check() throws { if expired { throw BenchError("timed out: \(what)") } }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
