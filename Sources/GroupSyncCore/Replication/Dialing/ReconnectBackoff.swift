/// When to dial a peer again after a failed attempt: exponential backoff with full jitter (AWS's
/// "Exponential Backoff and Jitter"), so devices that lost the same network do not all redial in step,
/// and a peer that is off for a day costs one attempt per `maxMillis`, not a busy loop.
public struct ReconnectBackoff: Sendable {
    public var baseMillis: Int64
    public var maxMillis: Int64
    /// The ceiling while the peer refuses this device. It refuses because it has not paired this device yet,
    /// or has removed it: redialing cannot help until its user pairs this device there, and `peer add` there
    /// makes that peer dial this device itself at once. So a refusing peer is asked about every 10 minutes, not
    /// every minute (found by review: a removed device's daemon logged five lines a minute about it, for good).
    public var refusedMaxMillis: Int64
    public private(set) var failures = 0
    /// Whether the last attempt ended with the peer refusing this device (a TLS alert after the handshake).
    public var peerRefused = false

    public init(baseMillis: Int64 = 500, maxMillis: Int64 = 60_000, refusedMaxMillis: Int64 = 600_000) {
        self.baseMillis = baseMillis
        self.maxMillis = maxMillis
        self.refusedMaxMillis = max(maxMillis, refusedMaxMillis)
    }

    /// The delay before the next attempt after one more failure; `unit` in [0, 1) is injected randomness.
    public mutating func nextDelay(unit: Double) -> Int64 {
        failures += 1
        let ceiling = min(peerRefused ? refusedMaxMillis : maxMillis, baseMillis << Int64(min(failures - 1, 20)))
        // Never less than half the ceiling: full jitter alone may redial at once after a failure.
        return ceiling / 2 + Int64(Double(ceiling / 2) * min(max(unit, 0), 0.999_999))
    }

    public mutating func reset() {
        failures = 0
        peerRefused = false
    }

    /// How long a session must have lasted to count as a success.
    public static let lastingSessionMillis: Int64 = 10_000

    /// A session with the peer ended after `lastedMillis`. One that lasted starts the backoff afresh; one that
    /// ended at once (refused after the handshake, a store that cannot open) counts as one more failure, so a
    /// peer that accepts and drops at once is not redialed in a tight loop.
    public mutating func sessionEnded(lastedMillis: Int64) {
        if lastedMillis > Self.lastingSessionMillis { reset() }
    }
}
