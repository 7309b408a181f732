import Testing
@testable import GroupSyncCore

/// Blocks made on two devices apart both survive the merge: each selection merges on its own key, and the
/// list apps read is derived from the keys again.
@Suite struct SelectionBlocksTests {
    let end = CallbackInvocation(activity: "focus", callback: .intervalDidEnd, event: nil)
    let selections: [String: Value] = [AppGroupState.selectionIDs: .dictionary(["social": .string("o"), "games": .string("o"), "news": .string("o")])]

    /// One device's suite after `actions` ran at `now`, and the versions each key was written with (the time,
    /// for a last-writer-wins merge of two such suites).
    func fired(_ actions: [[String: Value]], on values: [String: Value], at now: Double) -> (values: [String: Value], writtenAt: [String: Double]) {
        var values = values
        values[end.actionsKey] = .array(actions.map(Value.dictionary))
        var writtenAt: [String: Double] = [:]
        for (key, change) in ActionRunner.plan(end, suite: values, now: now).changes {
            writtenAt[key] = now
            switch change {
            case .set(let value): values[key] = value
            case .delete: values[key] = nil
            }
        }
        return (values, writtenAt)
    }

    /// What last-writer-wins per key makes of two devices' suites that started equal.
    func merged(_ a: (values: [String: Value], writtenAt: [String: Double]), _ b: (values: [String: Value], writtenAt: [String: Double])) -> [String: Value] {
        var out = a.values
        for key in Set(a.values.keys).union(b.values.keys) where (b.writtenAt[key] ?? -1) > (a.writtenAt[key] ?? -1) {
            out[key] = b.values[key]
        }
        return out
    }

    func block(_ id: String) -> [String: Value] { ["type": .string("blockSelection"), "familyActivitySelectionId": .string(id)] }
    func unblock(_ id: String) -> [String: Value] { ["type": .string("unblockSelection"), "familyActivitySelectionId": .string(id)] }

    @Test func blocksOfDifferentSelectionsOnTwoDevicesApartAreBothKept() {
        let a = fired([block("social")], on: selections, at: 1_000)
        let b = fired([block("games")], on: selections, at: 2_000)
        let healed = merged(a, b)
        #expect(healed[AppGroupState.blockedSelectionIDs] == .array([.string("games")]), "the list alone loses a's block")
        #expect(SelectionBlocks.blocked(in: healed) == ["social", "games"])
        let both = Value.array([.string("games"), .string("social")])
        let writes = SelectionBlocks.reconciliation(of: healed)
        #expect(writes[AppGroupState.blockedSelectionIDs] == both)
        guard case .dictionary(let update)? = writes[AppGroupState.lastBlockUpdate] else { Issue.record("lastBlockUpdate kept b's list"); return }
        #expect(update[AppGroupState.blockedSelectionIDs] == both && update["triggeredBy"] == .string(end.actionsKey))
        let reconciled = healed.merging(writes) { $1 }
        #expect(SelectionBlocks.reconciliation(of: reconciled).isEmpty, "a list already right is not written again")
    }

    @Test func theLaterActionOnOneSelectionWinsAndOthersStay() {
        let start = fired([block("social"), block("news")], on: selections, at: 1_000).values
        let a = fired([unblock("social")], on: start, at: 2_000)
        let b = fired([block("social"), block("games")], on: start, at: 1_500)
        #expect(SelectionBlocks.blocked(in: merged(a, b)) == ["news", "games"], "a's unblock of social came later")
        let reset = fired([["type": .string("resetBlocks")]], on: start, at: 2_000)
        #expect(SelectionBlocks.blocked(in: merged(reset, b)) == ["games"], "a reset clears what it saw; a block it never saw stays")
    }

    /// A selection ID that cannot name a key (a control character, past the key length) makes that action
    /// invalid, not the whole callback: the rest runs and the event is recorded.
    @Test func aSelectionIDThatCannotNameAKeyIsThatActionsProblem() {
        var values = selections
        values[AppGroupState.selectionIDs] = .dictionary(["tab\tbed": .string("o"), String(repeating: "x", count: 1010): .string("o"), "games": .string("o")])
        values[end.actionsKey] = .array([.dictionary(block("tab\tbed")), .dictionary(block(String(repeating: "x", count: 1010))), .dictionary(block("games"))])
        let plan = ActionRunner.plan(end, suite: values, now: 1_000)
        #expect(plan.reports.map(\.outcome) == [.invalid, .invalid, .done], "\(plan.reports)")
        #expect(plan.reports[0].detail.contains("control character") && plan.reports[1].detail.contains("longer than 1024 bytes"))
        #expect(plan.changes[AppGroupState.blockedSelectionIDs] == .set(.array([.string("games")])))
        #expect(plan.changes[end.eventsKey] != nil)
    }

    /// A reset clears a listed selection that cannot name a key (an app's own list) by leaving it out of the
    /// list, and the rest of the callback runs.
    @Test func aResetClearsAListedSelectionThatCannotNameAKey() {
        var values = selections
        values[AppGroupState.blockedSelectionIDs] = .array([.string("tab\tid"), .string("news")])
        let after = fired([["type": .string("resetBlocks")]], on: values, at: 1_000).values
        #expect(after[AppGroupState.blockedSelectionIDs] == .array([]))
        #expect(after[SelectionBlocks.key("news")] == .bool(false) && after[SelectionBlocks.key("tab\tid")] == nil)
        #expect(after[end.eventsKey] != nil)
    }

    /// Keys are matched as bytes: "groupsync.block." then a combining mark is one character, and matched as
    /// characters the block was stored but never listed.
    @Test func aSelectionIDStartingWithACombiningMarkIsListed() {
        var values = selections
        values[AppGroupState.selectionIDs] = .dictionary(["\u{301}x": .string("o"), "\u{200D}y": .string("o")])
        let after = fired([block("\u{301}x"), block("\u{200D}y")], on: values, at: 1_000).values
        #expect(after[AppGroupState.blockedSelectionIDs] == .array([.string("\u{200D}y"), .string("\u{301}x")]) || after[AppGroupState.blockedSelectionIDs] == .array([.string("\u{301}x"), .string("\u{200D}y")]))
        #expect(SelectionBlocks.blocked(in: after) == ["\u{301}x", "\u{200D}y"])
    }

    @Test func aListWrittenWithoutKeysCountsForTheSelectionsTheKeysDoNotCover() {
        var values = selections
        values[AppGroupState.blockedSelectionIDs] = .array([.string("news"), .string("social")])
        #expect(SelectionBlocks.reconciliation(of: values).isEmpty, "an app's own list, no keys: left alone")
        let after = fired([unblock("social"), block("games")], on: values, at: 1_000).values
        #expect(after[AppGroupState.blockedSelectionIDs] == .array([.string("games"), .string("news")]))
        #expect(after[SelectionBlocks.key("social")] == .bool(false))
        #expect(after[SelectionBlocks.key("news")] == nil, "news stays covered by the list")
        let reset = fired([["type": .string("resetBlocks")]], on: after, at: 2_000).values
        #expect(reset[AppGroupState.blockedSelectionIDs] == .array([]))
        #expect(reset[SelectionBlocks.key("news")] == .bool(false), "a reset gives the listed selection a key, so a peer's older list cannot bring it back")
    }
}
