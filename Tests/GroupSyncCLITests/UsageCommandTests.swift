import Foundation
import Testing
import GroupSyncCore

/// `groupsync usage record`: genuine usage spends once, phantoms spend nothing, bad names are refused.
@Suite struct UsageCommandTests {
    let folder = TemporaryFolder()
    var cli: GroupSyncBinary { GroupSyncBinary(home: folder.path + "/home") }
    let now = Int64(Date().timeIntervalSince1970 * 1000)

    func record(_ cli: GroupSyncBinary, _ activity: String, _ event: String, armedAt: Int64, at: Int64) throws -> [String: Value] {
        let result = try cli.run("usage", "record", "--activity", activity, "--event", event, "--armed-at", "\(armedAt)", "--at", "\(at)", "--json")
        guard result.status == 0, case .dictionary(let o) = try JSONParser.parse(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw FixtureError("usage record failed: \(result.stderr)")
        }
        return o
    }

    func remaining(_ cli: GroupSyncBinary) throws -> Value? {
        guard case .dictionary(let o) = try JSONParser.parse(try cli.run("balance", "--json").stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else { return nil }
        return o["remainingMinutes"]
    }

    /// Usage past the balance (the blocked app was used anyway) is owed, not hidden: `balance` shows it, and
    /// what is earned next pays for it, as `balance earn` says at once rather than a moment later.
    @Test func usagePastTheBalanceIsShownOwedAndPaidFromTheNextEarning() throws {
        try cli.run("init")
        try cli.run("balance", "policy", "--daily-base", "1")
        let armed = now - 10 * 60_000
        for minute in 1...3 { _ = try record(cli, "scroll", "used-\(minute)", armedAt: armed, at: armed + Int64(minute) * 61_000) }
        guard case .dictionary(let before) = try JSONParser.parse(try cli.run("balance", "--json").stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else { return }
        #expect(before["remainingMinutes"] == .double(0) && before["owedMinutes"] == .double(2) && before["timeUp"] == .bool(true), "\(before)")
        #expect(try cli.run("balance").stdout.contains("2 min of usage not paid for yet"))
        let earned = try cli.run("balance", "earn", "3")
        #expect(earned.stdout == "earned 3 min; 1 min remaining\n", "\(earned.stdout)")
        #expect(try remaining(cli) == .double(1))
    }

    @Test func genuineThresholdsSpendOnceAndPhantomsNothing() throws {
        try cli.run("init")
        try cli.run("balance", "policy", "--daily-base", "20")
        let armed = now - 10 * 60_000
        var last: [String: Value] = [:]
        for quarter in 1...8 { last = try record(cli, "focus", "used-\(Double(quarter) / 4)", armedAt: armed, at: armed + Int64(quarter) * 15_000 + 50) }
        #expect(last["monitorUsageMinutes"] == .double(2))
        #expect(last["counted"] == .bool(true))
        #expect(try remaining(cli) == .double(18))
        let duplicate = try record(cli, "focus", "used-2.0", armedAt: armed, at: armed + 120_050)
        #expect(duplicate["duplicate"] == .bool(true))
        #expect(try remaining(cli) == .double(18))
        // Guard 1: used-9 cannot have happened 3 minutes after arming.
        let early = try record(cli, "focus", "used-9", armedAt: armed, at: armed + 180_000)
        #expect(early["reason"] == .string("too-early"))
        #expect(try remaining(cli) == .double(18))
        // Nor by stamping it an hour ahead: a threshold that has not fired yet is refused, not counted.
        let future = try cli.run("usage", "record", "--activity", "focus", "--event", "used-60", "--armed-at", "\(armed)", "--at", "\(now + 3_600_000)")
        #expect(future.status == 2 && future.stderr.contains("in the future"), "\(future.stderr)")
        #expect(try remaining(cli) == .double(18))
        // Guard 2: a fresh monitor whose thresholds all fire within a second, nine minutes in.
        let pocket = now - 9 * 60_000
        for name in ["used-0.25", "used-0.5", "used-1", "used-3"] { last = try record(cli, "pocket", name, armedAt: pocket, at: now - 1_000) }
        #expect(last["reason"] == .string("phantom-burst"))
        #expect(last["monitorUsageMinutes"] == .double(0))
        #expect(try remaining(cli) == .double(18))
        let text = try cli.run("usage", "record", "--activity", "pocket", "--event", "used-4", "--armed-at", "\(pocket)", "--at", "\(now - 900)")
        #expect(text.stdout.contains("phantom guard 2"), "\(text.stdout)")
    }

    @Test func underscoresAndEmptyNamesAreRefusedWithAMessage() throws {
        try cli.run("init")
        for (activity, event) in [("focus_apps", "used-1"), ("focus", "used_7"), ("", "used-1"), ("focus", ""), ("focus", "warning")] {
            let result = try cli.run("usage", "record", "--activity", activity, "--event", event, "--armed-at", "\(now)")
            #expect(result.status == 2, "\(activity) \(event)")
            #expect(result.stderr.split(separator: "\n").count == 1)
        }
        #expect(try cli.run("usage", "record", "--activity", "a_b", "--event", "used-1", "--armed-at", "1").stderr.contains("'_'"))
        for arguments in [["usage"], ["usage", "record"], ["usage", "record", "--activity", "a", "--event", "used-1"],
                          ["usage", "record", "--activity", "a", "--event", "used-1", "--armed-at", "soon"],
                          ["usage", "record", "--activity", "a", "--event", "used-1", "--armed-at", "1", "--at", "-5"],
                          ["usage", "fire"]] {
            #expect(try cli.run(arguments).status == 2, "\(arguments)")
        }
        #expect(try cli.run("list", "groupsync.balance").stdout.isEmpty, "nothing was written")
        #expect(try cli.run("usage", "--help").stdout.contains("usage: groupsync usage record"))
    }

    @Test func twoDevicesReportingTheSameEventCountItOnce() throws {
        let a = try TestDevice("a", in: folder), b = try TestDevice("b", in: folder)
        for device in [a, b] { try device.start() }
        try pairAll([a, b])
        try a.cli.run("balance", "policy", "--daily-base", "30")
        let armed = now - 5 * 60_000
        let deadline = Date().addingTimeInterval(10)
        while try remaining(b.cli) != .double(30), Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        for quarter in 1...12 {
            let at = armed + Int64(quarter) * 15_000 + 20
            _ = try record(a.cli, "shared", "used-\(Double(quarter) / 4)", armedAt: armed, at: at)
            _ = try record(b.cli, "shared", "used-\(Double(quarter) / 4)", armedAt: armed, at: at)
        }
        for device in [a, b] {
            let until = Date().addingTimeInterval(10)
            while try remaining(device.cli) != .double(27), Date() < until { Thread.sleep(forTimeInterval: 0.05) }
            #expect(try remaining(device.cli) == .double(27), "\(device.name): 3 minutes counted once\n\(device.log)")
        }
    }
}
