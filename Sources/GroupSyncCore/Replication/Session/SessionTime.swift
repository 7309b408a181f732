/// What the shell's two clocks read at one event, taken together and handed to the session.
///
/// A session needs two kinds of time, and one clock cannot serve both:
///
/// - **Durations** — the keep-alive and dead-peer timeouts, the wait before asking again for refused
///   entries — are measured on `monotonicMillis`. A wall clock steps (an NTP correction, a user setting the
///   time, a dead CMOS battery): stepped back by X, "nothing received for 90 s" would only come true after
///   X + 90 s, so a peer that vanished stays shown as connected and is never redialed; stepped forward by
///   more than 90 s, every session would be declared silent at once (PROTOCOL.md §6.7).
/// - **Instants other devices or the user compare** — the physical time in `hello` and `ping` that the
///   clock-offset estimate compares with the peer's clock (§6.2), the physical time the HLC of applied
///   entries is checked against, and `lastSyncMillis` shown in status — are `wallMillis`.
///
/// A plain value, so the core stays free of real clocks: the daemon reads both, the simulator and tests
/// make them up (and can step one without the other).
public struct SessionTime: Sendable, Equatable {
    /// Milliseconds on a clock that never steps and only runs forward; its origin means nothing (it is
    /// only ever compared with other readings of the same clock, within one session).
    public var monotonicMillis: Int64
    /// Milliseconds since the Unix epoch on this device's wall clock, which may step either way.
    public var wallMillis: Int64

    public init(monotonicMillis: Int64, wallMillis: Int64) {
        self.monotonicMillis = monotonicMillis
        self.wallMillis = wallMillis
    }
}
