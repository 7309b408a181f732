import Glibc
import GroupSyncCore
import GroupSyncStore

extension SessionTime {
    /// Both of the device's clocks as a session needs them (see `SessionTime`): a monotonic reading for its
    /// deadlines and the wall clock for what peers and people compare.
    ///
    /// The monotonic reading is CLOCK_BOOTTIME rather than CLOCK_MONOTONIC: both never step, but only
    /// CLOCK_BOOTTIME counts the time the machine was suspended. A laptop that slept through the night has
    /// heard nothing from its peers all that while, and its sessions should say so on waking (and redial)
    /// rather than show the peers connected for another 90 s.
    @Sendable static func now() -> SessionTime {
        var ts = timespec()
        clock_gettime(CLOCK_BOOTTIME, &ts)
        return SessionTime(monotonicMillis: Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000,
                           wallMillis: WallClock.nowMillis())
    }
}
