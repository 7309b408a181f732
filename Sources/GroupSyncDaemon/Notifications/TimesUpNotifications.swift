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
        var aPostFailed = false
        for action in decision.actions {
            switch action {
            case .post(let request):
                switch service.post(request) {
                case .done(_, .failed, _, _), .refused: aPostFailed = true
                case .done: break
                }
            case .dismiss(let id): _ = service.dismiss(id: id)
            }
        }
        // A post the server refused (or that could not be stored) is not recorded as made: the state stays as it
        // was read, so the next look (the balance's next change, a restart) decides again and posts it again,
        // as an app's failed post goes out again with its next post. Recorded, the episode would count as
        // shown and "time's up" would never reach this screen. A post waiting for a server is not a failure.
        guard !aPostFailed else { return decision.recheckAtMillis }
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
