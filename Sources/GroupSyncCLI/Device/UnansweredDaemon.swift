import GroupSyncDaemon
import GroupSyncStore

/// Why a request to the daemon's control socket got no answer: no daemon runs on the home, or one runs but
/// did not answer (stopped with SIGSTOP, swamped, out of descriptors). Commands must tell the two apart: a
/// stopped daemon reported as "not running" sent the user to `serve`, which then refused to start because one
/// was (found by review). The daemon lock says which.
enum UnansweredDaemon {
    case notRunning
    case notAnswering

    init(home: Home) {
        self = DaemonLock.isHeld(home: home) ? .notAnswering : .notRunning
    }

    /// What happens to a request left in the store for the daemon (`pending`, `removing`): `action` is what the
    /// daemon does with it ("shown", "dismissed").
    func whenLeftInTheStore(_ action: String) -> String {
        "\(reason); \(action) " + (self == .notRunning ? "when one starts" : "once it goes on")
    }

    var reason: String {
        switch self {
        case .notRunning: "no daemon running"
        case .notAnswering: "the daemon runs but did not answer (stopped or busy)"
        }
    }
}
