import Synchronization

/// Logs an event that a stranger can repeat at will (a refused handshake, a dropped flood) once per
/// interval per key, and counts the repeats in between, so a hostile or misconfigured device cannot fill
/// the log or the disk.
final class LogThrottle: Sendable {
    private let sink: @Sendable (String) -> Void
    private let intervalMillis: Int64
    private let clock: @Sendable () -> Int64
    private let seen = Mutex<[String: (loggedAt: Int64, suppressed: Int)]>([:])
    static let maxKeys = 1024

    convenience init(log: DaemonLog, intervalMillis: Int64 = 60_000, clock: @escaping @Sendable () -> Int64) {
        self.init(intervalMillis: intervalMillis, clock: clock) { log.write($0) }
    }

    /// `sink` writes a line that is let through.
    init(intervalMillis: Int64 = 60_000, clock: @escaping @Sendable () -> Int64, sink: @escaping @Sendable (String) -> Void) {
        self.sink = sink
        self.intervalMillis = intervalMillis
        self.clock = clock
    }

    func write(key: String, _ message: String) {
        let now = clock()
        let repeats: Int? = seen.withLock { seen in
            if let last = seen[key], now - last.loggedAt < intervalMillis {
                seen[key]!.suppressed += 1
                return nil
            }
            let suppressed = seen[key]?.suppressed ?? 0
            // Bounded, whatever the keys. Forgotten first: keys that held nothing back and whose interval has
            // passed (that changes nothing); then the others that held nothing back (a repeat of theirs is logged
            // again, before its interval ends); everything only when a thousand keys are all counting repeats.
            if seen.count >= Self.maxKeys {
                seen = seen.filter { now - $0.value.loggedAt < intervalMillis || $0.value.suppressed > 0 }
                if seen.count >= Self.maxKeys { seen = seen.filter { $0.value.suppressed > 0 } }
                if seen.count >= Self.maxKeys { seen.removeAll() }
            }
            seen[key] = (now, 0)
            return suppressed
        }
        guard let repeats else { return }
        sink(message + (repeats > 0 ? " repeated=\(repeats)" : ""))
    }
}
