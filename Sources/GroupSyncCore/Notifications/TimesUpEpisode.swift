/// "Time's up" and the countdown, decided from the replicated balance: every device sees the same records, so
/// every device posts the same episode's "time's up" once — not once per usage event, not again after a
/// reconnect (the episode already posted is remembered in a local-only suite, `State`) — and earning or
/// extending, which ends the episode, takes it down again.
///
/// Pure: the daemon (`TimesUpNotifications`) reads the summary and the state, performs the actions in order and
/// writes the state back.
public enum TimesUpEpisode {
    public static let timesUpID = "groupsync.timesUp"
    public static let countdownID = "groupsync.countdown"

    /// Which episode this device has posted, and which spend the countdown last showed. Local only: each field
    /// is an int under its own key (`keys`) of the daemon's state suite; a missing key is `nil`.
    public struct State: Hashable, Sendable {
        /// `timesUpCreditedMs`: what was credited when this device last posted "time's up".
        public var creditedMs: Int64?
        /// `timesUpShortfallMs`: the largest shortfall seen since that post.
        public var shortfallMs: Int64?
        /// `timesUpEpisode`: an older groupsync kept the last spend here instead of the credit; that episode
        /// was posted too. Read, never written, deleted once the episode is carried over or over.
        public var olderEpisode: Int64?
        /// `countdownSpend`: the spend the countdown (or "time's up") last told of.
        public var countdownSpend: Int64?
        /// `countdownShownMs`: what was left when the countdown was posted; `nil` while none is shown.
        public var countdownShownMs: Int64?
        /// `countdownDayEnd`: the end of the day the countdown was posted on.
        public var countdownDayEnd: Int64?

        public init(creditedMs: Int64? = nil, shortfallMs: Int64? = nil, olderEpisode: Int64? = nil,
                    countdownSpend: Int64? = nil, countdownShownMs: Int64? = nil, countdownDayEnd: Int64? = nil) {
            self.creditedMs = creditedMs
            self.shortfallMs = shortfallMs
            self.olderEpisode = olderEpisode
            self.countdownSpend = countdownSpend
            self.countdownShownMs = countdownShownMs
            self.countdownDayEnd = countdownDayEnd
        }

        /// Each field's key in the state suite. The names are stored, so they never change.
        public static let keys: [(key: String, field: WritableKeyPath<State, Int64?> & Sendable)] = [
            ("timesUpCreditedMs", \.creditedMs),
            ("timesUpShortfallMs", \.shortfallMs),
            ("timesUpEpisode", \.olderEpisode),
            ("countdownSpend", \.countdownSpend),
            ("countdownShownMs", \.countdownShownMs),
            ("countdownDayEnd", \.countdownDayEnd),
        ]

        /// The state read key by key (`read` answers `nil` for a missing or unreadable key).
        public init(reading read: (String) -> Int64?) {
            self.init()
            for (key, field) in Self.keys { self[keyPath: field] = read(key) }
        }

        /// The writes that turn `old` into this state, in `keys` order: a new value to set, or `nil` to delete.
        /// An unchanged field is not written.
        public func writes(from old: State) -> [(key: String, value: Int64?)] {
            Self.keys.compactMap { key, field in self[keyPath: field] == old[keyPath: field] ? nil : (key, self[keyPath: field]) }
        }
    }

    public enum Action: Hashable, Sendable {
        case post(NotificationRequest)
        case dismiss(id: String)
    }

    public struct Decision: Hashable, Sendable {
        /// To perform in this order.
        public var actions: [Action]
        /// The state to keep.
        public var state: State
        /// When to check again with no write to prompt it: the end of the day while "time's up" or the
        /// countdown is shown (the new day's allowance ends the episode, and yesterday's countdown is taken
        /// down: a laptop left on overnight must not wake to "No minutes left" or "2 min left"); nil otherwise,
        /// so no timer runs.
        public var recheckAtMillis: Int64?

        public init(actions: [Action], state: State, recheckAtMillis: Int64?) {
            self.actions = actions
            self.state = state
            self.recheckAtMillis = recheckAtMillis
        }
    }

    /// What the balance calls for, given what this device already posted.
    public static func decide(summary: BalanceSummary, state: State) -> Decision {
        var next = state
        var actions: [Action] = []
        // What was credited when this device last posted "time's up" (an older groupsync kept the last spend
        // under `timesUpEpisode` instead: that episode was posted too).
        let postedAtCredit = state.creditedMs
        let postedByOlder = state.olderEpisode != nil
        if summary.timeUp {
            // The largest shortfall seen since the post: credits up to it went to the debt, and time never came
            // back for them.
            let seenShortfall = state.shortfallMs
            let shortfall = max(seenShortfall ?? 0, summary.shortfallMs)
            // Saturating: the state is a local file anyone can edit, and a daemon must not trap on it.
            if postedAtCredit.map({ summary.creditedMs.saturatingSubtracting($0) > shortfall }) ?? !postedByOlder {
                actions.append(.post(timesUpRequest))
                next.creditedMs = summary.creditedMs
                next.shortfallMs = summary.shortfallMs
                actions.append(.dismiss(id: countdownID))
                forgetCountdown(&next)
                // "Time's up" told of this spend: the countdown must not post it again later (at midnight, or
                // after an earning), only the next spend's.
                next.countdownSpend = summary.lastSpendMillis
            } else {
                if postedAtCredit.map({ summary.creditedMs < $0 }) ?? true {
                    // Credits can shrink (a device's undrawn share of a day leaves the sum when the day ends): the
                    // next credit must still count as new.
                    next.creditedMs = summary.creditedMs
                }
                if shortfall != seenShortfall { next.shortfallMs = shortfall }
            }
            if postedByOlder { next.olderEpisode = nil }
            return Decision(actions: actions, state: next, recheckAtMillis: summary.dayEndMillis)
        }
        if postedAtCredit != nil || postedByOlder {
            // Minutes were earned or an extension granted: the episode is over everywhere.
            actions.append(.dismiss(id: timesUpID))
            next.creditedMs = nil
            next.shortfallMs = nil
            next.olderEpisode = nil
        }
        // The passive countdown follows usage: updated in place (same ID) whenever a spend moved the balance,
        // and, while it is shown, whenever what it says changed otherwise (an earning, the next day): a change
        // of a few milliseconds that leaves its text as it is posts nothing.
        if next.countdownShownMs != nil, next.countdownDayEnd != summary.dayEndMillis {
            // A new day: yesterday's countdown goes; the day's first spend posts the next one.
            actions.append(.dismiss(id: countdownID))
            forgetCountdown(&next)
        }
        let shownMs = next.countdownShownMs
        let spentSince = summary.lastSpendMillis > 0 && next.countdownSpend != summary.lastSpendMillis
        let textChanged = shownMs.map { countdownText(remainingMs: $0) != countdownText(remainingMs: summary.remainingMs) } ?? false
        if spentSince || textChanged {
            actions.append(.post(countdownRequest(remainingMs: summary.remainingMs)))
            next.countdownSpend = summary.lastSpendMillis
            next.countdownShownMs = summary.remainingMs
            next.countdownDayEnd = summary.dayEndMillis
            return Decision(actions: actions, state: next, recheckAtMillis: summary.dayEndMillis)
        }
        return Decision(actions: actions, state: next, recheckAtMillis: shownMs == nil ? nil : summary.dayEndMillis)
    }

    public static let timesUpRequest = request(id: timesUpID, title: "Time's up",
                                               body: "No minutes left. Earn more, or solve a puzzle for an extension.",
                                               level: .timeSensitive)

    public static func countdownRequest(remainingMs: Int64) -> NotificationRequest {
        request(id: countdownID, title: "Screen time", body: countdownText(remainingMs: remainingMs), level: .passive)
    }

    /// The countdown's words, which decide whether it is posted again too.
    private static func countdownText(remainingMs: Int64) -> String { "\(MinutesText.format(BalanceAmount.minutes(remainingMs))) min left" }

    private static func forgetCountdown(_ state: inout State) {
        state.countdownShownMs = nil
        state.countdownDayEnd = nil
    }

    private static func request(id: String, title: String, body: String, level: NotificationLevel) -> NotificationRequest {
        // A local post on each device (the balance itself is what replicates), never debounced: each episode
        // or usage step is news once.
        try! NotificationRequest(id: id, content: NotificationContent(title: title, body: body, level: level),
                                 minIntervalSeconds: 0, scope: .local, groupSyncsOwn: true)
    }
}
