import GroupSyncCore
import GroupSyncStore

/// "Time's up" and the countdown, driven by the replicated balance: the shell around `TimesUpEpisode`, which
/// decides. This reads the balance and the episode's local-only state, posts and dismisses what the decision
/// says, in its order, and writes back the state's changed keys.
final class TimesUpNotifications: @unchecked Sendable {
    /// Which episode this device has posted, and which spend the countdown last showed. Local only.
    static let stateSuite = LocalSuites.prefix + "balance-notifications"
    /// The daemon's environment, for `TZDIR`: the policy's zone must load here as it does in the CLI.
    let environment: [String: String]

    init(environment: [String: String]) { self.environment = environment }

    /// Posts or takes down what the balance calls for. Returns when to check again with no write to prompt
    /// it (`TimesUpEpisode.Decision.recheckAtMillis`).
    func check(service: NotificationService, store: Store, nowMillis: Int64) -> Int64? {
        guard let summary = try? store.updateBalance(nowMillis: nowMillis, environment: environment, { $0.summary }) else { return nil }
        let state = TimesUpEpisode.State(reading: { Self.int(store, $0) })
        let decision = TimesUpEpisode.decide(summary: summary, state: state)
        for action in decision.actions {
            switch action {
            case .post(let request): _ = service.post(request)
            case .dismiss(let id): _ = service.dismiss(id: id)
            }
        }
        for (key, value) in decision.state.writes(from: state) {
            if let value {
                _ = try? store.set(.int(value), suite: Self.stateSuite, key: key)
            } else {
                _ = try? store.delete(suite: Self.stateSuite, key: key)
            }
        }
        return decision.recheckAtMillis
    }

    private static func int(_ store: Store, _ key: String) -> Int64? {
        if case .int(let value)? = try? store.entry(suite: stateSuite, key: key)?.value { return value }
        return nil
    }
}
