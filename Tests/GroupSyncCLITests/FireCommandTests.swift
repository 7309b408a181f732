import Foundation
import Testing
import GroupSyncCore

/// `groupsync fire`: stored actions run when a callback is reported; edits apply to the next callback.
@Suite struct FireCommandTests {
    let folder = TemporaryFolder()
    var cli: GroupSyncBinary { GroupSyncBinary(home: folder.path + "/home") }
    let suite = "group.com.example.blocker"

    func fire(_ arguments: String...) throws -> [String: Value] {
        let result = try cli.run(["fire", "--suite", suite, "--json"] + arguments)
        guard result.status == 0, case .dictionary(let o) = try JSONParser.parse(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw FixtureError("fire failed: \(result.stderr)")
        }
        return o
    }

    func outcomes(_ report: [String: Value]) -> [String] {
        guard case .array(let actions)? = report["actions"] else { return [] }
        return actions.compactMap { if case .dictionary(let a) = $0, case .string(let o)? = a["outcome"] { o } else { nil } }
    }

    @Test func actionsRunRecordTheEventAndEditsApplyToTheNextCallback() throws {
        try cli.run("init")
        try cli.run("set", suite, "familyActivitySelectionIds", "--json", #"{"distracting":"opaque"}"#)
        try cli.run("set", suite, "actions_for_focus_eventDidReachThreshold_used-5", "--json",
                    #"[{"type":"blockSelection","familyActivitySelectionId":"distracting"},{"type":"sendNotification","payload":{"identifier":"times-up","title":"Time's up: {activityName}"}},{"type":"openApp"}]"#)
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        let first = try fire("--activity", "focus", "--callback", "eventDidReachThreshold", "--event", "used-5")
        #expect(outcomes(first) == ["done", "done", "unsupported"])
        #expect(first["notifications"] == .array([.string("times-up")]))
        #expect(try cli.run("get", suite, "blockedSelectionIds").stdout == "[\"distracting\"]\n")
        #expect(try cli.run("get", suite, "groupsync.notification.times-up").stdout.contains("Time's up: focus"))
        let recorded = try cli.run("get", "--json", suite, "events_focus_eventDidReachThreshold_used-5").stdout
        #expect(recorded.contains(#""type":"double""#))
        if case .dictionary(let o) = try JSONParser.parse(recorded.trimmingCharacters(in: .whitespacesAndNewlines)), case .double(let ms)? = o["value"] {
            #expect(ms >= Double(before) && ms < Double(before) + 60_000, "epoch milliseconds")
        }
        // The app edits the list: the next callback does the new thing, no restart.
        try cli.run("set", suite, "actions_for_focus_eventDidReachThreshold_used-5", "--json",
                    #"[{"type":"unblockSelection","familyActivitySelectionId":"distracting","skipIfAlreadyTriggeredWithinMS":3600000}, {"type":"resetBlocks"}]"#)
        let second = try fire("--activity", "focus", "--callback", "eventDidReachThreshold", "--event", "used-5")
        #expect(outcomes(second) == ["skipped", "done"], "fired again within the hour: the first is skipped")
        #expect(try cli.run("get", suite, "blockedSelectionIds").stdout == "[]\n")
        let text = try cli.run("fire", "--suite", suite, "--activity", "focus", "--callback", "intervalDidStart")
        #expect(text.stdout.contains("no actions stored under actions_for_focus_intervalDidStart"))
    }

    @Test func stopMonitoringClearsTheMonitorsActionsBeforeItsIntervalDidEndRuns() throws {
        try cli.run("init")
        try cli.run("set", suite, "actions_for_focus_intervalDidEnd", "--json", #"[{"type":"enableBlockAllMode"}]"#)
        try cli.run("set", suite, "actions_for_app_intervalDidStart", "--json", #"[{"type":"stopMonitoring","activityName":"focus"}]"#)
        #expect(outcomes(try fire("--activity", "app", "--callback", "intervalDidStart")) == ["done"])
        #expect(try cli.run("get", suite, "actions_for_focus_intervalDidEnd").status == 1, "the actions are gone")
        // iOS now fires intervalDidEnd for the stopped monitor: nothing is left to run.
        let end = try fire("--activity", "focus", "--callback", "intervalDidEnd")
        #expect(outcomes(end).isEmpty)
        #expect(try cli.run("get", suite, "isBlockingAll").status == 1, "no shield flash")
        #expect(try cli.run("get", suite, "groupsync.monitor.focus").stdout.contains(#""status":"stopped""#))
        // A guard at the real boundary minus a minute holds back an early end.
        let later = Int64(Date().timeIntervalSince1970 * 1000) + 3_600_000
        try cli.run("set", suite, "actions_for_focus_intervalDidEnd", "--json", #"[{"type":"enableBlockAllMode","neverTriggerBefore":\#(later - 60_000)}]"#)
        #expect(outcomes(try fire("--activity", "focus", "--callback", "intervalDidEnd")) == ["skipped"])
        // A callback cannot be reported as fired in the future to get past it: refused, nothing recorded.
        let recorded = try cli.run("get", suite, "events_focus_intervalDidEnd").stdout
        let future = try cli.run("fire", "--suite", suite, "--activity", "focus", "--callback", "intervalDidEnd", "--at", "\(later)")
        #expect(future.status == 2 && future.stderr.contains("in the future"), "\(future.stderr)")
        #expect(try cli.run("get", suite, "events_focus_intervalDidEnd").stdout == recorded)
        // Once the boundary has passed, it runs.
        let passed = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
        try cli.run("set", suite, "actions_for_focus_intervalDidEnd", "--json", #"[{"type":"enableBlockAllMode","neverTriggerBefore":\#(passed)}]"#)
        #expect(outcomes(try fire("--activity", "focus", "--callback", "intervalDidEnd")) == ["done"])
        // A firing reported late does not move the last firing back.
        let last = try cli.run("get", suite, "events_focus_intervalDidEnd").stdout
        _ = try fire("--activity", "focus", "--callback", "intervalDidEnd", "--at", "\(passed - 3_600_000)")
        #expect(try cli.run("get", suite, "events_focus_intervalDidEnd").stdout == last)
    }

    @Test func badCallbacksAndNamesAreRefused() throws {
        try cli.run("init")
        for arguments in [["fire"], ["fire", "--suite", suite], ["fire", "--suite", suite, "--activity", "focus"],
                          ["fire", "--suite", suite, "--activity", "focus", "--callback", "intervalDidExplode"],
                          ["fire", "--suite", suite, "--activity", "focus_apps", "--callback", "intervalDidEnd"],
                          ["fire", "--suite", suite, "--activity", "focus", "--callback", "eventDidReachThreshold"],
                          ["fire", "--suite", suite, "--activity", "focus", "--callback", "eventDidReachThreshold", "--event", "used_7"],
                          ["fire", "--suite", suite, "--activity", "focus", "--callback", "intervalDidEnd", "--event", "used-7"],
                          ["fire", "--suite", "", "--activity", "focus", "--callback", "intervalDidEnd"],
                          // GroupSync's own suites are not an App Group (found by audit: events_… went into the balance's).
                          ["fire", "--suite", "groupsync.balance", "--activity", "focus", "--callback", "intervalDidEnd"]] {
            let result = try cli.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
        }
        #expect(try cli.run("list", suite).stdout.isEmpty, "nothing was written")
        #expect(try cli.run("list", "groupsync.balance").stdout.isEmpty, "nothing was written")
        #expect(try cli.run("fire", "--help").stdout.contains("usage: groupsync fire"))
    }
}
