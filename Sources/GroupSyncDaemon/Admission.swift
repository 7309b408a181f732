import Synchronization

/// Bounds what strangers can make the daemon hold before they prove who they are: every accepted TCP
/// connection costs a thread until its TLS handshake ends (at most the handshake timeout), so the number
/// of handshakes in progress is capped, in total and per remote host. Past the cap a connection is closed at
/// once. Paired devices still meet: each side also dials the other, and outgoing connections are not
/// counted here, so a flood against one device cannot cut it off from its peers.
final class Admission: Sendable {
    let maxPending: Int
    let maxPendingPerHost: Int
    private let pending = Mutex<(total: Int, byHost: [String: Int])>((0, [:]))

    init(maxPending: Int = 64, maxPendingPerHost: Int = 8) {
        self.maxPending = maxPending
        self.maxPendingPerHost = maxPendingPerHost
    }

    /// Takes a handshake slot for `host`, or returns false when none is free.
    func admit(host: String) -> Bool {
        pending.withLock { state in
            let mine = state.byHost[host, default: 0]
            guard state.total < maxPending, mine < maxPendingPerHost else { return false }
            state.total += 1
            state.byHost[host] = mine + 1
            return true
        }
    }

    /// Gives the slot back once the handshake ended, either way.
    func release(host: String) {
        pending.withLock { state in
            state.total -= 1
            let left = state.byHost[host, default: 1] - 1
            state.byHost[host] = left > 0 ? left : nil
        }
    }

    /// "203.0.113.5" from "203.0.113.5:51234", "::1" from "[::1]:51234".
    static func host(of remoteAddress: String) -> String {
        if remoteAddress.hasPrefix("["), let end = remoteAddress.firstIndex(of: "]") {
            return String(remoteAddress[remoteAddress.index(after: remoteAddress.startIndex)..<end])
        }
        return remoteAddress.split(separator: ":").first.map(String.init) ?? remoteAddress
    }
}

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
