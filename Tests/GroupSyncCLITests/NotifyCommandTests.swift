import Foundation
import Testing

/// `groupsync notify` answers that need no notification server, through a daemon that has no session bus:
/// exit codes as the README's table gives them, and wording that promises nothing untrue.
@Suite struct NotifyCommandTests {
    private func deviceWithoutABus(in folder: TemporaryFolder) throws -> TestDevice {
        let device = try TestDevice("a", in: folder)
        try device.start(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(folder.path)/no-bus-here", "DISPLAY": ""])
        return device
    }

    private static let shield = ["notify", "shield", "--suite", "group.scrollbrake", "--config-key", "shieldShownNotification", "--app", "Instagram"]

    /// A daemon that takes the request but does not answer in time may still carry it out: the CLI says so,
    /// rather than "no daemon is running" (a listener that never answers stands in for a held-up daemon).
    @Test func anUnansweredRequestIsNotReportedAsNoDaemon() throws {
        let folder = TemporaryFolder()
        let cli = GroupSyncBinary(home: folder.path + "/home")
        try cli.run("init")
        let listener = try #require(UnixSocketSupport.listener(at: cli.home + "/control.sock", backlog: 4))
        defer { close(listener) }
        let result = try cli.run("notify", "post", "--id", "x", "--title", "t")
        #expect(result.status == 3)
        #expect(result.stderr.contains("did not answer in time") && !result.stderr.contains("no daemon"), "\(result.stderr)")
    }

    /// GroupSync's own IDs ("time's up", the countdown) are not an app's to post or dismiss: the daemon's
    /// next post would replace the app's, and the app's dismissal took the daemon's down (found by review).
    @Test func groupSyncsOwnNotificationIDsAreRefused() throws {
        let folder = TemporaryFolder()
        let a = try deviceWithoutABus(in: folder)
        for arguments in [["notify", "post", "--id", "groupsync.timesUp", "--title", "mine"], ["notify", "dismiss", "--id", "groupsync.countdown"],
                          ["notify", "post", "--id", "groupsync.", "--title", "mine"]] {
            let result = try a.cli.run(arguments)
            #expect(result.status == 2 && result.stderr.contains("keeps for its own notifications"), "\(arguments): \(result.stdout)\(result.stderr)")
        }
        #expect(try a.cli.run("notify", "post", "--id", "groupsync-like", "--title", "mine").status != 2)
    }

    /// A missing configuration key is "not found" (1), like `get` of a missing key, not a failed environment (3).
    @Test func shieldWithoutItsConfigurationKeyIsNotFound() throws {
        let folder = TemporaryFolder()
        let a = try deviceWithoutABus(in: folder)
        let result = try a.cli.run(Self.shield)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("group.scrollbrake/shieldShownNotification"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(try a.cli.run("get", "group.scrollbrake", "shieldShownNotificationLastSentAt").status == 1, "nothing written")
        #expect(try a.cli.run("list", "groupsync.local.notifications").lines.isEmpty, "nothing posted")
        let json = try a.cli.run(Self.shield + ["--json"])
        #expect(json.status == 1 && json.stdout.contains(#""notFound":true"#), "\(json.stdout)")
    }

    /// A configuration of the wrong shape is bad input (2): the app wrote bad data; the machine is fine.
    @Test func shieldWithAMalformedConfigurationIsBadInput() throws {
        let folder = TemporaryFolder()
        let a = try deviceWithoutABus(in: folder)
        for config in [["a string"], ["--json", #"{"minIntervalSeconds":30}"#], ["--json", #"{"payload":{"title":""}}"#]] {
            #expect(try a.cli.run(["set", "group.scrollbrake", "shieldShownNotification"] + config).status == 0)
            let result = try a.cli.run(Self.shield)
            #expect(result.status == 2, "\(config): \(result.stdout)\(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].contains("shieldShownNotification"), "\(config): \(result.stderr)")
            #expect(try a.cli.run("get", "group.scrollbrake", "shieldShownNotificationLastSentAt").status == 1, "\(config): nothing written")
        }
        let json = try a.cli.run(Self.shield + ["--json"])
        #expect(json.status == 2 && json.stdout.contains(#""badInput":true"#) && json.stdout.contains(#""ok":false"#), "\(json.stdout)")
        // GroupSync's own suites are not an App Group: refused before anything is read or written there.
        try a.cli.run("set", "groupsync.shields", "cfg", "--json", #"{"payload":{"title":"Blocked"}}"#)
        let own = try a.cli.run("notify", "shield", "--suite", "groupsync.shields", "--config-key", "cfg", "--app", "X")
        #expect(own.status == 2 && own.stderr.contains("one of GroupSync's own suites"), "\(own.stdout)\(own.stderr)")
        #expect(try a.cli.run("get", "groupsync.shields", "cfgLastSentAt").status == 1)
        #expect(try a.cli.run("list", "groupsync.local.notifications").lines.isEmpty, "nothing posted")
    }

    /// Text that its placeholders would make too long, and a configuration key too long for its `…LastSentAt`
    /// stamp to be a key, are bad input (2), refused before anything is built, shown or stored: the daemon
    /// built gigabytes before, and a shield was shown and then failed with exit 3, never debounced (found by
    /// review).
    @Test func textFilledPastTheLimitAndAKeyTooLongForItsStampAreBadInput() throws {
        let folder = TemporaryFolder()
        let a = try deviceWithoutABus(in: folder)
        let post = try a.cli.run("notify", "post", "--id", "big", "--title", String(repeating: "{activityName}", count: 600),
                                 "--activity", String(repeating: "A", count: 1_000))
        #expect(post.status == 2 && post.stderr.contains("the title, its placeholders filled in, would be 600000 bytes"), "\(post.stderr)")

        let longKey = String(repeating: "k", count: 1_015)
        try a.cli.run("set", "group.scrollbrake", longKey, "--json", #"{"payload":{"title":"Blocked"},"minIntervalSeconds":600}"#)
        let shield = try a.cli.run("notify", "shield", "--suite", "group.scrollbrake", "--config-key", longKey, "--app", "X")
        #expect(shield.status == 2 && shield.stderr.contains("debounce stamp") && shield.stderr.contains("at most 1014 bytes"), "\(shield.stderr)")

        let title = String(repeating: "{applicationOrDomainDisplayName}", count: 1_000)
        try a.cli.run("set", "group.scrollbrake", "wide", "--json", #"{"payload":{"title":"\#(title)"}}"#)
        let wide = try a.cli.run("notify", "shield", "--suite", "group.scrollbrake", "--config-key", "wide", "--app", String(repeating: "X", count: 10_000))
        #expect(wide.status == 2 && wide.stderr.contains("would be 10000000 bytes"), "\(wide.stderr)")
        #expect(try a.cli.run("list", "groupsync.local.notifications").lines.isEmpty, "nothing posted")
        #expect(try a.cli.run("get", "group.scrollbrake", "wideLastSentAt").status == 1, "nothing stamped")
    }

    /// A dismiss is not a post: it never says the notification "will be shown when a server appears".
    @Test func dismissWithoutAServerDoesNotPromiseToShowIt() throws {
        let folder = TemporaryFolder()
        let a = try deviceWithoutABus(in: folder)
        #expect(try a.cli.run("notify", "post", "--id", "shield", "--title", "Blocked", "--scope", "all").stdout.hasPrefix("waiting"))
        let dismissed = try a.cli.run("notify", "dismiss", "--id", "shield")
        #expect(dismissed.status == 0, "\(dismissed.stderr)")
        #expect(!dismissed.stdout.hasPrefix("waiting") && !dismissed.stdout.contains("will be shown"), "\(dismissed.stdout)")
        let again = try a.cli.run("notify", "dismiss", "--id", "shield", "--json")
        #expect(again.status == 0 && again.stdout.contains(#""result":"#) && again.stdout.contains(#""reason":"#), "\(again.stdout)")
        #expect(!again.stdout.contains("will be shown"), "\(again.stdout)")
    }
}
