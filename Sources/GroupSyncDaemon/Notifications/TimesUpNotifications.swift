import GroupSyncCore
import GroupSyncStore

/// "Time's up" and the countdown, driven by the replicated balance: every device sees the same records, so
/// every device posts the same episode's "time's up" once — not once per usage event, not again after a
/// reconnect (the episode already posted is remembered in a local-only suite) — and earning or extending,
/// which ends the episode, takes it down again.
final class TimesUpNotifications: @unchecked Sendable {
    static let timesUpID = "groupsync.timesUp"
    static let countdownID = "groupsync.countdown"
    /// Which episode this device has posted, and which spend the countdown last showed. Local only.
    static let stateSuite = LocalSuites.prefix + "balance-notifications"
    /// The daemon's environment, for `TZDIR`: the policy's zone must load here as it does in the CLI.
    let environment: [String: String]

    init(environment: [String: String]) { self.environment = environment }

    /// Posts or takes down what the balance calls for. Returns when to check again with no write to prompt
    /// it: the end of the day while "time's up" or the countdown is shown (the new day's allowance ends the
    /// episode, and yesterday's countdown is taken down: a laptop left on overnight must not wake to "No
    /// minutes left" or "2 min left"); nil otherwise, so no timer runs.
    func check(service: NotificationService, store: Store, nowMillis: Int64) -> Int64? {
        guard let summary = try? store.updateBalance(nowMillis: nowMillis, environment: environment, { $0.summary }) else { return nil }
        // What was credited when this device last posted "time's up" (an older groupsync kept the last spend
        // under `timesUpEpisode` instead: that episode was posted too).
        let postedAtCredit = Self.int(store, "timesUpCreditedMs")
        let postedByOlder = Self.int(store, "timesUpEpisode") != nil
        if summary.timeUp {
            // The largest shortfall seen since the post: credits up to it went to the debt, and time never came
            // back for them.
            let seenShortfall = Self.int(store, "timesUpShortfallMs")
            let shortfall = max(seenShortfall ?? 0, summary.shortfallMs)
            if postedAtCredit.map({ summary.creditedMs - $0 > shortfall }) ?? !postedByOlder {
                _ = service.post(Self.request(id: Self.timesUpID, title: "Time's up",
                                              body: "No minutes left. Earn more, or solve a puzzle for an extension.",
                                              level: .timeSensitive))
                Self.store(store, "timesUpCreditedMs", summary.creditedMs)
                Self.store(store, "timesUpShortfallMs", summary.shortfallMs)
                _ = service.dismiss(id: Self.countdownID)
                Self.forgetCountdown(store)
                // "Time's up" told of this spend: the countdown must not post it again later (at midnight, or
                // after an earning), only the next spend's.
                Self.store(store, "countdownSpend", summary.lastSpendMillis)
            } else {
                if postedAtCredit.map({ summary.creditedMs < $0 }) ?? true {
                    // Credits can shrink (a device's undrawn share of a day leaves the sum when the day ends): the
                    // next credit must still count as new.
                    Self.store(store, "timesUpCreditedMs", summary.creditedMs)
                }
                if shortfall != seenShortfall { Self.store(store, "timesUpShortfallMs", shortfall) }
            }
            if postedByOlder { _ = try? store.delete(suite: Self.stateSuite, key: "timesUpEpisode") }
            return summary.dayEndMillis
        }
        if postedAtCredit != nil || postedByOlder {
            // Minutes were earned or an extension granted: the episode is over everywhere.
            _ = service.dismiss(id: Self.timesUpID)
            for key in ["timesUpCreditedMs", "timesUpShortfallMs", "timesUpEpisode"] { _ = try? store.delete(suite: Self.stateSuite, key: key) }
        }
        // The passive countdown follows usage: updated in place (same ID) whenever a spend moved the balance,
        // and, while it is shown, whenever what is left changed otherwise (an earning, the next day).
        var shownMs = Self.int(store, "countdownShownMs")
        if shownMs != nil, Self.int(store, "countdownDayEnd") != summary.dayEndMillis {
            // A new day: yesterday's countdown goes; the day's first spend posts the next one.
            _ = service.dismiss(id: Self.countdownID)
            Self.forgetCountdown(store)
            shownMs = nil
        }
        let spentSince = summary.lastSpendMillis > 0 && Self.int(store, "countdownSpend") != summary.lastSpendMillis
        if spentSince || (shownMs != nil && shownMs != summary.remainingMs) {
            _ = service.post(Self.request(id: Self.countdownID, title: "Screen time", body: "\(MinutesText.format(summary.remainingMinutes)) min left", level: .passive))
            Self.store(store, "countdownSpend", summary.lastSpendMillis)
            Self.store(store, "countdownShownMs", summary.remainingMs)
            Self.store(store, "countdownDayEnd", summary.dayEndMillis)
            return summary.dayEndMillis
        }
        return shownMs == nil ? nil : summary.dayEndMillis
    }

    private static func forgetCountdown(_ store: Store) {
        for key in ["countdownShownMs", "countdownDayEnd"] { _ = try? store.delete(suite: stateSuite, key: key) }
    }

    private static func request(id: String, title: String, body: String, level: NotificationLevel) -> NotificationRequest {
        // A local post on each device (the balance itself is what replicates), never debounced: each episode
        // or usage step is news once.
        try! NotificationRequest(id: id, content: NotificationContent(title: title, body: body, level: level),
                                 minIntervalSeconds: 0, scope: .local, groupSyncsOwn: true)
    }

    private static func int(_ store: Store, _ key: String) -> Int64? {
        if case .int(let value)? = try? store.entry(suite: stateSuite, key: key)?.value { return value }
        return nil
    }

    private static func store(_ store: Store, _ key: String, _ value: Int64) {
        _ = try? store.set(.int(value), suite: stateSuite, key: key)
    }
}
