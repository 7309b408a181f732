import Testing
@testable import GroupSyncCore

@Suite struct TimesUpEpisodeTests {
    typealias State = TimesUpEpisode.State
    static let dayEnd: Int64 = 1_700_006_400_000
    static let nextDayEnd = dayEnd + 86_400_000
    static let minute: Int64 = 60_000

    static func timeUp(credited: Int64, shortfall: Int64 = 0, lastSpend: Int64 = 500, dayEnd: Int64 = dayEnd) -> BalanceSummary {
        BalanceSummary(dayEndMillis: dayEnd, remainingMs: 0, timeUp: true, lastSpendMillis: lastSpend,
                       creditedMs: credited, shortfallMs: shortfall)
    }

    static func timeLeft(_ remainingMs: Int64, credited: Int64 = 120 * minute, lastSpend: Int64 = 500, dayEnd: Int64 = dayEnd) -> BalanceSummary {
        BalanceSummary(dayEndMillis: dayEnd, remainingMs: remainingMs, timeUp: false, lastSpendMillis: lastSpend, creditedMs: credited)
    }

    static let postTimesUp = TimesUpEpisode.Action.post(TimesUpEpisode.timesUpRequest)
    static let dismissTimesUp = TimesUpEpisode.Action.dismiss(id: "groupsync.timesUp")
    static let dismissCountdown = TimesUpEpisode.Action.dismiss(id: "groupsync.countdown")

    static func postCountdown(_ body: String) -> TimesUpEpisode.Action {
        .post(try! NotificationRequest(id: "groupsync.countdown", content: NotificationContent(title: "Screen time", body: body, level: .passive),
                                       minIntervalSeconds: 0, scope: .local, groupSyncsOwn: true))
    }

    // MARK: Time's up

    @Test func theFirstTimeUpPostsItRecordsTheEpisodeAndTakesTheCountdownDown() {
        let shown = State(countdownSpend: 400, countdownShownMs: 3 * Self.minute, countdownDayEnd: Self.dayEnd)
        let decision = TimesUpEpisode.decide(summary: Self.timeUp(credited: 60 * Self.minute, shortfall: 2_000, lastSpend: 500), state: shown)
        #expect(decision.actions == [Self.postTimesUp, Self.dismissCountdown])
        #expect(decision.state == State(creditedMs: 60 * Self.minute, shortfallMs: 2_000, countdownSpend: 500))
        #expect(decision.recheckAtMillis == Self.dayEnd)
    }

    /// The state is read from a local suite that anyone can edit: an absurd credit is no reason to trap.
    @Test func anAbsurdStoredCreditIsNoCrash() {
        let decision = TimesUpEpisode.decide(summary: Self.timeUp(credited: 60 * Self.minute), state: State(creditedMs: .min))
        #expect(decision.actions == [Self.postTimesUp, Self.dismissCountdown])
    }

    @Test func timesUpIsATimeSensitiveLocalPostThatIsNeverDebounced() {
        let request = TimesUpEpisode.timesUpRequest
        #expect(request.id == "groupsync.timesUp")
        #expect(request.content == NotificationContent(title: "Time's up", body: "No minutes left. Earn more, or solve a puzzle for an extension.",
                                                       level: .timeSensitive))
        #expect(request.scope == .local && request.minIntervalSeconds == 0)
    }

    @Test func theSameEpisodeAfterAReconnectOrLaterSpendsPostsNothing() {
        let posted = TimesUpEpisode.decide(summary: Self.timeUp(credited: 60 * Self.minute), state: State()).state
        // Owed usage paid bit by bit: later spends, the same credit.
        let again = TimesUpEpisode.decide(summary: Self.timeUp(credited: 60 * Self.minute, lastSpend: 9_000), state: posted)
        #expect(again.actions.isEmpty)
        #expect(again.state == posted)
        #expect(again.state.writes(from: posted).isEmpty)
        #expect(again.recheckAtMillis == Self.dayEnd)
    }

    @Test func anEarningBeyondTheShortfallThatIsSpentAgainIsANewEpisode() {
        let posted = State(creditedMs: 60 * Self.minute, shortfallMs: 0, countdownSpend: 500)
        let decision = TimesUpEpisode.decide(summary: Self.timeUp(credited: 70 * Self.minute, lastSpend: 800), state: posted)
        #expect(decision.actions == [Self.postTimesUp, Self.dismissCountdown])
        #expect(decision.state == State(creditedMs: 70 * Self.minute, shortfallMs: 0, countdownSpend: 800))
    }

    @Test func anEarningThatOnlyPaysTheDebtPostsNothingAndTheLargestShortfallCounts() {
        var state = TimesUpEpisode.decide(summary: Self.timeUp(credited: 60 * Self.minute), state: State()).state
        // Owed usage comes in: the shortfall grows, and is remembered.
        var decision = TimesUpEpisode.decide(summary: Self.timeUp(credited: 60 * Self.minute, shortfall: 30 * Self.minute), state: state)
        #expect(decision.actions.isEmpty)
        #expect(decision.state.shortfallMs == 30 * Self.minute)
        state = decision.state
        // 20 minutes earned: all of it goes to the debt (10 minutes still owed).
        decision = TimesUpEpisode.decide(summary: Self.timeUp(credited: 80 * Self.minute, shortfall: 10 * Self.minute), state: state)
        #expect(decision.actions.isEmpty)
        #expect(decision.state == state)
        state = decision.state
        // 30 minutes since the post: exactly the largest shortfall, still nothing came back.
        decision = TimesUpEpisode.decide(summary: Self.timeUp(credited: 90 * Self.minute), state: state)
        #expect(decision.actions.isEmpty)
        #expect(decision.state.shortfallMs == 30 * Self.minute)
        state = decision.state
        // One millisecond more did come back, and was spent: a new episode.
        decision = TimesUpEpisode.decide(summary: Self.timeUp(credited: 90 * Self.minute + 1), state: state)
        #expect(decision.actions == [Self.postTimesUp, Self.dismissCountdown])
        #expect(decision.state.creditedMs == 90 * Self.minute + 1 && decision.state.shortfallMs == 0)
    }

    @Test func creditsThatShrinkAreRecordedAgainWithoutAPost() {
        let posted = State(creditedMs: 60 * Self.minute, shortfallMs: 0, countdownSpend: 500)
        let shrunk = TimesUpEpisode.decide(summary: Self.timeUp(credited: 50 * Self.minute), state: posted)
        #expect(shrunk.actions.isEmpty)
        #expect(shrunk.state == State(creditedMs: 50 * Self.minute, shortfallMs: 0, countdownSpend: 500))
        #expect(shrunk.state.writes(from: posted).map(\.key) == ["timesUpCreditedMs"])
        // The next credit counts from the smaller sum.
        let next = TimesUpEpisode.decide(summary: Self.timeUp(credited: 55 * Self.minute), state: shrunk.state)
        #expect(next.actions == [Self.postTimesUp, Self.dismissCountdown])
    }

    @Test func timeNoLongerUpDismissesTimesUpAndForgetsTheEpisode() {
        let posted = State(creditedMs: 60 * Self.minute, shortfallMs: 1_000, countdownSpend: 500)
        let decision = TimesUpEpisode.decide(summary: Self.timeLeft(10 * Self.minute, credited: 70 * Self.minute), state: posted)
        #expect(decision.actions == [Self.dismissTimesUp])
        #expect(decision.state == State(countdownSpend: 500))
        let writes = decision.state.writes(from: posted)
        #expect(writes.map(\.key) == ["timesUpCreditedMs", "timesUpShortfallMs"] && writes.allSatisfy { $0.value == nil })
        #expect(decision.recheckAtMillis == nil)
    }

    @Test func anEpisodePostedByAnOlderGroupsyncCountsAsPostedAndItsKeyIsDeleted() {
        let older = State(olderEpisode: 400)
        let decision = TimesUpEpisode.decide(summary: Self.timeUp(credited: 60 * Self.minute, shortfall: 500), state: older)
        #expect(decision.actions.isEmpty)
        #expect(decision.state == State(creditedMs: 60 * Self.minute, shortfallMs: 500))
        let writes = decision.state.writes(from: older)
        #expect(writes.map(\.key) == ["timesUpCreditedMs", "timesUpShortfallMs", "timesUpEpisode"])
        #expect(writes.map(\.value) == [60 * Self.minute, 500, nil])
        #expect(decision.recheckAtMillis == Self.dayEnd)
    }

    @Test func anEpisodePostedByAnOlderGroupsyncIsTakenDownWhenTimeComesBack() {
        let decision = TimesUpEpisode.decide(summary: Self.timeLeft(5 * Self.minute), state: State(olderEpisode: 500, countdownSpend: 500))
        #expect(decision.actions == [Self.dismissTimesUp])
        #expect(decision.state == State(countdownSpend: 500))
    }

    // MARK: Countdown

    @Test func aSpendPostsTheCountdownWithWhatIsLeft() {
        let decision = TimesUpEpisode.decide(summary: Self.timeLeft(12 * Self.minute + 30_000, lastSpend: 700), state: State(countdownSpend: 500))
        #expect(decision.actions == [Self.postCountdown("12.5 min left")])
        #expect(decision.state == State(countdownSpend: 700, countdownShownMs: 12 * Self.minute + 30_000, countdownDayEnd: Self.dayEnd))
        #expect(decision.recheckAtMillis == Self.dayEnd)
    }

    @Test func theFirstSpendEverPostsTheCountdownAndNoSpendPostsNothing() {
        let first = TimesUpEpisode.decide(summary: Self.timeLeft(59 * Self.minute, lastSpend: 100), state: State())
        #expect(first.actions == [Self.postCountdown("59 min left")])
        let none = TimesUpEpisode.decide(summary: Self.timeLeft(60 * Self.minute, lastSpend: 0), state: State())
        #expect(none.actions.isEmpty && none.state == State() && none.recheckAtMillis == nil)
    }

    @Test func theCountdownIsPostedAgainWhileShownWhenWhatIsLeftChanged() {
        let shown = State(countdownSpend: 700, countdownShownMs: 5 * Self.minute, countdownDayEnd: Self.dayEnd)
        // An earning: no spend, but more left.
        let earned = TimesUpEpisode.decide(summary: Self.timeLeft(20 * Self.minute, lastSpend: 700), state: shown)
        #expect(earned.actions == [Self.postCountdown("20 min left")])
        #expect(earned.state == State(countdownSpend: 700, countdownShownMs: 20 * Self.minute, countdownDayEnd: Self.dayEnd))
        #expect(earned.state.writes(from: shown).map(\.key) == ["countdownShownMs"])
        // Less than a hundredth of a minute more: the text would not change, so nothing is posted again.
        let barely = TimesUpEpisode.decide(summary: Self.timeLeft(5 * Self.minute + 200, lastSpend: 700), state: shown)
        #expect(barely.actions.isEmpty && barely.state == shown)
        // Nothing changed: nothing posted, and the day's end is still when to look again.
        let same = TimesUpEpisode.decide(summary: Self.timeLeft(5 * Self.minute, lastSpend: 700), state: shown)
        #expect(same.actions.isEmpty && same.state == shown)
        #expect(same.recheckAtMillis == Self.dayEnd)
    }

    @Test func theCountdownIsNotPostedAgainWhenNotShownAndNothingWasSpent() {
        // "Time's up" told of spend 700; time came back by an earning.
        let decision = TimesUpEpisode.decide(summary: Self.timeLeft(15 * Self.minute, lastSpend: 700), state: State(countdownSpend: 700))
        #expect(decision.actions.isEmpty)
        #expect(decision.recheckAtMillis == nil)
    }

    @Test func aNewDayTakesYesterdaysCountdownDown() {
        let shown = State(countdownSpend: 700, countdownShownMs: 2 * Self.minute, countdownDayEnd: Self.dayEnd)
        let decision = TimesUpEpisode.decide(summary: Self.timeLeft(60 * Self.minute, lastSpend: 700, dayEnd: Self.nextDayEnd), state: shown)
        #expect(decision.actions == [Self.dismissCountdown])
        #expect(decision.state == State(countdownSpend: 700))
        let writes = decision.state.writes(from: shown)
        #expect(writes.map(\.key) == ["countdownShownMs", "countdownDayEnd"] && writes.allSatisfy { $0.value == nil })
        #expect(decision.recheckAtMillis == nil)
    }

    @Test func aNewDaysFirstSpendReplacesYesterdaysCountdown() {
        let shown = State(countdownSpend: 700, countdownShownMs: 2 * Self.minute, countdownDayEnd: Self.dayEnd)
        let decision = TimesUpEpisode.decide(summary: Self.timeLeft(59 * Self.minute, lastSpend: 900, dayEnd: Self.nextDayEnd), state: shown)
        #expect(decision.actions == [Self.dismissCountdown, Self.postCountdown("59 min left")])
        #expect(decision.state == State(countdownSpend: 900, countdownShownMs: 59 * Self.minute, countdownDayEnd: Self.nextDayEnd))
        #expect(decision.recheckAtMillis == Self.nextDayEnd)
    }

    @Test func theEndOfAnEpisodeAndANewSpendTakeTimesUpDownThenPostTheCountdown() {
        let posted = State(creditedMs: 60 * Self.minute, shortfallMs: 0, countdownSpend: 500)
        let decision = TimesUpEpisode.decide(summary: Self.timeLeft(9 * Self.minute, credited: 70 * Self.minute, lastSpend: 600), state: posted)
        #expect(decision.actions == [Self.dismissTimesUp, Self.postCountdown("9 min left")])
        #expect(decision.state == State(countdownSpend: 600, countdownShownMs: 9 * Self.minute, countdownDayEnd: Self.dayEnd))
    }

    // MARK: Stored form

    @Test func theStateIsReadAndWrittenUnderItsStoredKeys() {
        let stored: [String: Int64] = ["timesUpCreditedMs": 1, "timesUpShortfallMs": 2, "timesUpEpisode": 3,
                                       "countdownSpend": 4, "countdownShownMs": 5, "countdownDayEnd": 6]
        let state = State(reading: { stored[$0] })
        #expect(state == State(creditedMs: 1, shortfallMs: 2, olderEpisode: 3, countdownSpend: 4, countdownShownMs: 5, countdownDayEnd: 6))
        #expect(State().writes(from: state).map(\.key) == ["timesUpCreditedMs", "timesUpShortfallMs", "timesUpEpisode",
                                                             "countdownSpend", "countdownShownMs", "countdownDayEnd"])
        #expect(state.writes(from: State()).map(\.value) == [1, 2, 3, 4, 5, 6])
        #expect(state.writes(from: state).isEmpty)
    }
}
