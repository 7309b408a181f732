import Testing
@testable import GroupSyncCore

/// What a callback does to a suite: actions in order, guards, effects as state, unsupported types reported.
@Suite struct ActionRunnerTests {
    let now: Double = 1_790_000_600_000
    let end = CallbackInvocation(activity: "focus", callback: .intervalDidEnd, event: nil)

    func plan(_ values: [String: Value], _ invocation: CallbackInvocation? = nil) -> ActionPlan {
        ActionRunner.plan(invocation ?? end, suite: values, now: now)
    }

    func applying(_ plan: ActionPlan, to values: [String: Value]) -> [String: Value] {
        var out = values
        for (key, change) in plan.changes {
            switch change {
            case .set(let v): out[key] = v
            case .delete: out[key] = nil
            }
        }
        return out
    }

    @Test func theCallbackIsRecordedInEpochMillisecondsAfterTheActions() {
        let result = plan([:])
        #expect(result.actionCount == 0)
        #expect(result.changes == ["events_focus_intervalDidEnd": .set(.double(now))])
        let threshold = CallbackInvocation(activity: "focus", callback: .eventDidReachThreshold, event: "used-0.25")
        #expect(threshold.actionsKey == "actions_for_focus_eventDidReachThreshold_used-0.25")
        #expect(plan([:], threshold).changes["events_focus_eventDidReachThreshold_used-0.25"] == .set(.double(now)))
    }

    /// A notification whose filled-in text outgrows the limit is reported invalid on its own; the
    /// other actions run and the firing is recorded.
    @Test func anActionThatWouldWriteAnOversizedValueIsInvalidAndTheRestRun() {
        let long = CallbackInvocation(activity: String(repeating: "a", count: 200), callback: .intervalDidEnd, event: nil)
        let title = String(repeating: "{activityName}", count: 6_000)  // 84 KB that fill to 1.2 MB
        let result = plan([long.actionsKey: .array([
            .dictionary(["type": .string("enableBlockAllMode")]),
            .dictionary(["type": .string("sendNotification"), "payload": .dictionary(["identifier": .string("big"), "title": .string(title)])]),
        ])], long)
        #expect(result.reports.map(\.outcome) == [.done, .invalid], "\(result.reports)")
        #expect(result.reports.last?.detail.contains("the title, its placeholders filled in, would be 1200000 bytes") == true, "\(result.reports)")
        #expect(result.changes[AppGroupState.notificationKey("big")] == nil && result.notifications.isEmpty)
        #expect(result.changes[AppGroupState.isBlockingAll] == .set(.bool(true)))
        #expect(result.changes[long.eventsKey] == .set(.double(now)))
    }

    @Test func aFiringReportedLateDoesNotMoveTheLastFiringBack() {
        #expect(plan(["events_focus_intervalDidEnd": .double(now + 5_000)]).changes["events_focus_intervalDidEnd"] == nil)
        #expect(plan(["events_focus_intervalDidEnd": .double(now - 5_000)]).changes["events_focus_intervalDidEnd"] == .set(.double(now)))
    }

    @Test func blockingKeepsTheSetOfBlockedSelections() {
        var values: [String: Value] = [
            AppGroupState.selectionIDs: .dictionary(["social": .string("opaque"), "games": .string("opaque")]),
            "shieldConfiguration_strict": .dictionary(["title": .string("No")]),
            end.actionsKey: .array([
                .dictionary(["type": .string("blockSelection"), "familyActivitySelectionId": .string("social"), "shieldId": .string("strict")]),
                .dictionary(["type": .string("blockSelection"), "familyActivitySelectionId": .string("games")]),
                .dictionary(["type": .string("unblockSelection"), "familyActivitySelectionId": .string("social")]),
            ]),
        ]
        let result = plan(values)
        #expect(result.reports.map(\.outcome) == [.done, .done, .done])
        values = applying(result, to: values)
        #expect(values[AppGroupState.blockedSelectionIDs] == .array([.string("games")]))
        #expect(values[AppGroupState.fallbackShieldConfiguration] == .dictionary(["title": .string("No")]))
        values[end.actionsKey] = .array([.dictionary(["type": .string("resetBlocks")]), .dictionary(["type": .string("enableBlockAllMode")])])
        values = applying(plan(values), to: values)
        #expect(values[AppGroupState.blockedSelectionIDs] == .array([]))
        #expect(values[AppGroupState.isBlockingAll] == .bool(true))
    }

    @Test func notificationsAreRecordedAsPendingRequestsWithPlaceholdersFilled() {
        let threshold = CallbackInvocation(activity: "focus", callback: .eventDidReachThreshold, event: "used-5")
        let values: [String: Value] = [threshold.actionsKey: .array([
            .dictionary(["type": .string("sendNotification"), "payload": .dictionary([
                "identifier": .string("countdown"), "title": .string("{activityName}: {eventName}"),
                "body": .string("{callbackName} {nope}"), "interruptionLevel": .string("passive"),
            ])]),
            .dictionary(["type": .string("removeAllDeliveredNotifications")]),
        ])]
        let result = plan(values, threshold)
        #expect(result.notifications == ["countdown"])
        guard case .set(.dictionary(let request))? = result.changes[AppGroupState.notificationKey("countdown")] else {
            Issue.record("no request")
            return
        }
        #expect(request["title"] == .string("focus: used-5"))
        #expect(request["body"] == .string("eventDidReachThreshold {nope}"))
        #expect(request["interruptionLevel"] == .string("passive"))
        // Removing all delivered notifications after it, in the same firing, takes it down too.
        #expect(request["status"] == .string("removing"))
        #expect(result.removals == ["countdown"])
        #expect(result.changes[AppGroupState.removeAllDeliveredAt] == .set(.double(now)))
        #expect(end.placeholders.fill("{eventName}") == "eventName", "no event: the placeholder's name")
        // One pass: a value holding a placeholder (an activity named by the app) is not expanded again (found
        // by review: `{activityName} reached` with the activity `{eventName}` read "used-5 reached").
        let sneaky = CallbackInvocation(activity: "{eventName}", callback: .eventDidReachThreshold, event: "used-5")
        #expect(sneaky.placeholders.fill("{activityName} reached at {eventName}") == "{eventName} reached at used-5")
    }

    /// Pending removals take back only this device's requests that are not on a screen yet, as iOS's pending
    /// requests: a pending one is deleted, one waiting for a notification server is marked for the daemon to
    /// drop, and one already shown, or another device's, is left alone.
    @Test func pendingRemovalsTakeBackOnlyThisDevicesRequestsNotYetShown() {
        func request(_ status: String, device: String = "me") -> Value {
            .dictionary(["title": .string("t"), "status": .string(status), "device": .string(device)])
        }
        let key = AppGroupState.notificationKey
        var values: [String: Value] = [key("pending"): request("pending"), key("waiting"): request("waiting"),
                                       key("shown"): request("shown"), key("theirs"): request("pending", device: "other")]
        values[end.actionsKey] = .array([.dictionary(["type": .string("removeAllPendingNotificationRequests")])])
        let all = ActionRunner.plan(end, suite: values, now: now, device: "me")
        #expect(all.changes[key("pending")] == .delete)
        guard case .set(.dictionary(let waiting))? = all.changes[key("waiting")] else { Issue.record("waiting untouched"); return }
        #expect(waiting["status"] == .string(ActionNotificationRequest.removing) && all.removals == ["waiting"])
        #expect(all.changes[key("shown")] == nil && all.changes[key("theirs")] == nil, "\(all.changes)")
        #expect(all.reports.first?.detail == "removed 2 pending requests")
        values[end.actionsKey] = .array([.dictionary(["type": .string("removePendingNotificationRequests"),
                                                      "identifiers": .array([.string("shown"), .string("pending"), .string("nope")])])])
        let some = ActionRunner.plan(end, suite: values, now: now, device: "me")
        #expect(some.changes[key("shown")] == nil && some.changes[key("pending")] == .delete)
        #expect(some.reports.first?.detail == "removed 1 pending request")
    }

    /// Each notification of one firing gets its own identifier by default, as the library's UUID does: the
    /// second used to take the first one's and replace it.
    /// An unknown level is ignored, as the library ignores it, but the report says so; a known one says nothing.
    /// Each request keeps its place in the firing (`order`), which the daemon shows them in.
    @Test func anUnknownInterruptionLevelIsReportedAndRequestsKeepTheirOrder() {
        let start = CallbackInvocation(activity: "focus", callback: .intervalDidStart, event: nil)
        let values: [String: Value] = [start.actionsKey: .array([
            .dictionary(["type": .string("sendNotification"), "payload": .dictionary(["identifier": .string("z"), "title": .string("t"), "interruptionLevel": .string("loud")])]),
            .dictionary(["type": .string("sendNotification"), "payload": .dictionary(["identifier": .string("a"), "title": .string("t"), "interruptionLevel": .string("critical")])]),
        ])]
        let result = plan(values, start)
        #expect(result.reports.map(\.outcome) == [.done, .done])
        #expect(result.reports[0].detail.contains("interruptionLevel 'loud' is unknown"), "\(result.reports[0].detail)")
        #expect(!result.reports[1].detail.contains("unknown"), "\(result.reports[1].detail)")
        #expect(result.notifications == ["z", "a"])
        func order(_ id: String) -> Value? {
            guard case .set(.dictionary(let request))? = result.changes[AppGroupState.notificationKey(id)] else { return nil }
            return request["order"]
        }
        #expect(order("z") == .int(1) && order("a") == .int(2))
    }

    @Test func twoNotificationsWithoutIdentifiersInOneFiringAreBothKept() {
        let note: (String) -> Value = { .dictionary(["type": .string("sendNotification"), "payload": .dictionary(["title": .string($0)])]) }
        let result = plan([end.actionsKey: .array([note("Focus ended"), note("Stretch")])])
        #expect(result.notifications.count == 2 && Set(result.notifications).count == 2, "\(result.notifications)")
        #expect(result.notifications.first == "\(end.actionsKey)@\(Int64(now))", "the first keeps the plain form")
    }

    @Test func anActionWithAnUnreadableGuardIsReportedInvalidAndNotRun() {
        let result = plan([end.actionsKey: .array([
            .dictionary(["type": .string("enableBlockAllMode"), "neverTriggerBefore": .bool(true)]),
        ])])
        #expect(result.reports.first?.outcome == .invalid, "\(result.reports)")
        #expect(result.changes[AppGroupState.isBlockingAll] == nil)
    }

    @Test func stoppingAMonitorClearsItsActionsFirst() {
        let values: [String: Value] = [
            "actions_for_focus_intervalDidEnd": .array([.dictionary(["type": .string("blockSelection"), "familyActivitySelectionId": .string("x")])]),
            "actions_for_focus_eventDidReachThreshold_used-1": .array([]),
            "actions_for_focusing_intervalDidEnd": .array([]),
            "actions_for_other_intervalDidStart": .array([.dictionary(["type": .string("stopMonitoring"), "activityNames": .array([.string("focus")])])]),
        ]
        let start = CallbackInvocation(activity: "other", callback: .intervalDidStart, event: nil)
        let result = plan(values, start)
        #expect(result.reports.first?.outcome == .done)
        #expect(result.changes["actions_for_focus_intervalDidEnd"] == .delete)
        #expect(result.changes["actions_for_focus_eventDidReachThreshold_used-1"] == .delete)
        #expect(result.changes["actions_for_focusing_intervalDidEnd"] == nil, "only that monitor's actions")
        guard case .set(.dictionary(let monitor))? = result.changes[AppGroupState.monitorKey("focus")] else { Issue.record("no monitor state"); return }
        #expect(monitor["status"] == .string("stopped"))
        // The intervalDidEnd that stopping fires now finds nothing to do.
        let after = applying(result, to: values)
        #expect(plan(after).actionCount == 0)
    }

    /// GroupSync's own notification IDs are not an app's: a request under one is refused, so no later removal
    /// of the app's can take "time's up" down (found by review).
    @Test func aRequestUnderGroupSyncsOwnIDIsInvalid() {
        let result = plan([end.actionsKey: .array([.dictionary(["type": .string("sendNotification"),
                                                                "payload": .dictionary(["identifier": .string("groupsync.timesUp"), "title": .string("app")])])])])
        #expect(result.reports.first?.outcome == .invalid, "\(result.reports)")
        #expect(result.changes[AppGroupState.notificationKey("groupsync.timesUp")] == nil && result.notifications.isEmpty)
    }

    /// Request keys are matched as bytes, as the store keeps them: as characters, "…notification." and a
    /// combining mark after it are one character, and a request whose identifier starts with one was never
    /// taken back or dismissed.
    @Test func aRequestWhoseIdentifierStartsWithACombiningMarkIsFound() {
        let key = AppGroupState.notificationKey("\u{301}x")
        #expect(AppGroupState.notificationIdentifier(ofKey: key) == "\u{301}x")
        #expect(AppGroupState.notificationIdentifier(ofKey: "groupsync.notificatio") == nil)
        func removing(_ action: String, status: String) -> ActionPlan {
            ActionRunner.plan(end, suite: [
                key: .dictionary(["title": .string("t"), "status": .string(status), "device": .string("me")]),
                end.actionsKey: .array([.dictionary(["type": .string(action)])]),
            ], now: now, device: "me")
        }
        #expect(removing("removeAllPendingNotificationRequests", status: ActionNotificationRequest.pending).changes[key] == .delete)
        #expect(removing("removeAllDeliveredNotifications", status: "shown").removals == ["\u{301}x"])
    }

    @Test func guardsSkipAndOtherTypesAreReportedNotDropped() {
        let values: [String: Value] = [end.actionsKey: .array([
            .dictionary(["type": .string("enableBlockAllMode"), "neverTriggerBefore": .double(now + 60_000)]),
            .dictionary(["type": .string("openApp")]),
            .dictionary(["type": .string("sendHttpRequest"), "url": .string("https://example.com")]),
            .dictionary(["title": .string("no type")]),
            .string("not an action"),
            .dictionary(["type": .string("startMonitoring"), "activityName": .string("next_session")]),
            .dictionary(["type": .string("startMonitoring"), "activityName": .string("next-session")]),
        ])]
        let result = plan(values)
        #expect(result.reports.map(\.outcome) == [.skipped, .unsupported, .unsupported, .invalid, .invalid, .invalid, .done])
        #expect(result.changes[AppGroupState.isBlockingAll] == nil)
        #expect(result.reports[5].detail.contains("'_'"))
        #expect(plan([end.actionsKey: .string("oops")]).actionsProblem != nil)
    }
}
