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
