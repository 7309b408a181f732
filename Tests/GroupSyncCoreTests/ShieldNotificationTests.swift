import Testing
@testable import GroupSyncCore

@Suite struct ShieldNotificationTests {
    static let suite = "group.com.honorfit.blocker"
    static let key = "honorfitShieldShownNotification"
    static let now: Int64 = 1_732_886_400_000

    static func config(_ json: String) -> Value { try! JSONParser.parse(json) }

    static func decide(_ config: Value?, lastSentAt: Value? = nil, at now: Int64 = now) throws(NotificationError) -> ShieldNotification.Outcome {
        try ShieldNotification.decide(config: config, lastSentAt: lastSentAt, suite: suite, configKey: key, appName: "Instagram", nowMillis: now)
    }

    @Test func theSeedsShapePostsAFilledRequest() throws {
        let config = Self.config(#"{"payload":{"title":"{applicationOrDomainDisplayName} is blocked","body":"Tap to earn time","interruptionLevel":"active"},"minIntervalSeconds":30}"#)
        let outcome = try Self.decide(config)
        guard case .post(let request, let lastSentAt) = outcome else { Issue.record("suppressed"); return }
        #expect(request.id == Self.key)
        #expect(request.content == NotificationContent(title: "Instagram is blocked", body: "Tap to earn time", level: .active))
        #expect(request.minIntervalSeconds == 0, "debounced here, by the stored last-sent time, not again by the post")
        #expect(request.scope == .local)
        #expect(request.ttlSeconds == NotificationRequest.defaultTTLSeconds)
        #expect(lastSentAt == .double(1_732_886_400))
        #expect(ShieldNotificationConfig.lastSentAtKey(configKey: Self.key) == "honorfitShieldShownNotificationLastSentAt")
    }

    @Test func defaultsFollowTheSeed() throws {
        let config = Self.config(#"{"payload":{"title":"Blocked"}}"#)
        guard case .post(let request, _) = try Self.decide(config) else { Issue.record("suppressed"); return }
        let sent = Value.double(Double(Self.now - 29_000) / 1000)
        #expect(try Self.decide(config, lastSentAt: sent) == .suppressed(lastSentAtMillis: Self.now - 29_000, untilMillis: Self.now + 1_000), "30 s")
        #expect(request.content == NotificationContent(title: "Blocked", body: "", level: .active))
    }

    @Test func identifierSubtitleScopeAndTTLAreHonoured() throws {
        let config = Self.config(#"{"payload":{"identifier":"shield","title":"T","subtitle":"{applicationOrDomainDisplayName}","body":"B {eventName}","interruptionLevel":"passive"},"minIntervalSeconds":5,"scope":"all","ttlSeconds":60}"#)
        guard case .post(let request, _) = try Self.decide(config) else { Issue.record("suppressed"); return }
        #expect(request.id == "shield")
        #expect(request.content == NotificationContent(title: "T", body: "Instagram\nB {eventName}", level: .passive))
        #expect(request.scope == .all && request.ttlSeconds == 60)
        let sent = Value.double(Double(Self.now - 1_000) / 1000)
        #expect(try Self.decide(config, lastSentAt: sent) == .suppressed(lastSentAtMillis: Self.now - 1_000, untilMillis: Self.now + 4_000), "5 s")
    }

    @Test func theStoredLastSentTimeDebounces() throws {
        let config = Self.config(#"{"payload":{"title":"Blocked"},"minIntervalSeconds":30.0}"#)
        let last = Value.double(Double(Self.now - 10_000) / 1000)
        #expect(try Self.decide(config, lastSentAt: last) == .suppressed(lastSentAtMillis: Self.now - 10_000, untilMillis: Self.now + 20_000))
        guard case .post = try Self.decide(config, lastSentAt: last, at: Self.now + 20_000) else { Issue.record("still suppressed"); return }
        // Written as an int or a date by hand, it still counts; as anything else it reads as never sent, like the seed's double(forKey:).
        #expect(try Self.decide(config, lastSentAt: .int((Self.now - 10_000) / 1000)) == .suppressed(lastSentAtMillis: Self.now - 10_000, untilMillis: Self.now + 20_000))
        #expect(try Self.decide(config, lastSentAt: .date(Double(Self.now - 10_000) / 1000)) == .suppressed(lastSentAtMillis: Self.now - 10_000, untilMillis: Self.now + 20_000))
        guard case .post = try Self.decide(config, lastSentAt: .string("yesterday")) else { Issue.record("suppressed by a string"); return }
    }

    /// The debounce is this device's: another device's stamp in the replicated suite counts for nothing, this
    /// device's own stamp (or the app's reset of it, written here) stands.
    @Test func onlyThisDevicesLastSentAtDebouncesItsShield() throws {
        let me = try DeviceID(bytes: Array(repeating: 1, count: 32)), peer = try DeviceID(bytes: Array(repeating: 2, count: 32))
        let theirs = Value.double(100), mine = Value.double(50)
        #expect(ShieldNotification.lastSentAt(stored: theirs, writtenBy: peer, device: me, ownStamp: mine) == mine)
        #expect(ShieldNotification.lastSentAt(stored: theirs, writtenBy: peer, device: me, ownStamp: nil) == nil)
        #expect(ShieldNotification.lastSentAt(stored: .double(0), writtenBy: me, device: me, ownStamp: mine) == .double(0), "the app's reset")
        #expect(ShieldNotification.lastSentAt(stored: nil, writtenBy: me, device: me, ownStamp: mine) == nil, "deleted here: reset")
        #expect(ShieldNotification.lastSentAt(stored: nil, writtenBy: nil, device: me, ownStamp: mine) == mine, "never stored")
    }

    @Test func missingOrMalformedConfigurationsSayWhereAndWhat() {
        #expect(throws: NotificationError.missingConfig(suite: Self.suite, key: Self.key)) { try Self.decide(nil) }
        func message(_ json: String) -> String {
            do { _ = try Self.decide(Self.config(json)); return "accepted" } catch { return error.description }
        }
        #expect(message(#"{"minIntervalSeconds":30}"#).contains("\(Self.suite)/\(Self.key) is malformed: 'payload' is missing"))
        #expect(message(#"{"payload":{"body":"x"}}"#).contains("payload: 'title' is missing"))
        #expect(message(#"{"payload":{"title":"x","interruptionLevel":"loud"}}"#).contains("unknown level 'loud'"))
        #expect(message(#"{"payload":{"title":"x"},"minIntervalSeconds":"30"}"#).contains("'minIntervalSeconds' should be a number"))
        #expect(message(#"{"payload":{"title":"x"},"minIntervalSeconds":-1}"#).contains("minimum interval"))
        #expect(message(#"{"payload":{"title":""}}"#).contains("non-empty title"))
        // Refused by the request, still named as the configuration's fault (so the daemon answers bad input).
        #expect(throws: NotificationError.malformedConfig(suite: Self.suite, key: Self.key, reason: NotificationError.emptyTitle.description)) {
            try Self.decide(Self.config(#"{"payload":{"title":""}}"#))
        }
        #expect(message(#"[1]"#).contains("expected a dictionary"))
    }
}
