import Testing
@testable import GroupSyncCore

@Suite struct NotificationLevelTests {
    @Test func eachLevelMapsToItsUrgencyAndHints() {
        let passive = NotificationLevel.passive.presentation
        #expect(passive.urgency == .low)
        #expect(passive.urgency.rawValue == 0)
        #expect(passive.suppressSound)
        #expect(!passive.resident)
        #expect(passive.expireTimeoutMillis == NotificationPresentation.serverDefaultTimeout)

        let active = NotificationLevel.active.presentation
        #expect(active.urgency == .normal)
        #expect(active.urgency.rawValue == 1)
        #expect(!active.suppressSound)
        #expect(active.expireTimeoutMillis == -1)

        let timeSensitive = NotificationLevel.timeSensitive.presentation
        #expect(timeSensitive.urgency == .normal)
        #expect(timeSensitive.resident)
        #expect(timeSensitive.expireTimeoutMillis == 0)
        #expect(!timeSensitive.suppressSound)

        let critical = NotificationLevel.critical.presentation
        #expect(critical.urgency == .critical)
        #expect(critical.urgency.rawValue == 2)
        #expect(critical.expireTimeoutMillis == 0)
        #expect(!critical.suppressSound)
    }

    @Test func categoriesAreVendorNamesPerLevel() {
        for level in NotificationLevel.allCases {
            #expect(level.presentation.category == "x-groupsync.\(level.rawValue)")
        }
    }

    @Test func levelsParseByTheirIOSNamesOnly() throws {
        #expect(try NotificationLevel(parsing: "timeSensitive") == .timeSensitive)
        #expect(throws: NotificationError.unknownLevel("timesensitive")) { try NotificationLevel(parsing: "timesensitive") }
        #expect(throws: NotificationError.unknownLevel("")) { try NotificationLevel(parsing: "") }
        #expect(NotificationError.unknownLevel("loud").description.contains("passive, active, timeSensitive, critical"))
    }

    @Test func scopesParseAndPickTheirSuite() throws {
        #expect(try NotificationScope(parsing: "all").recordSuite == "groupsync.notifications")
        #expect(try NotificationScope(parsing: "local").recordSuite == "groupsync.local.notifications")
        #expect(NotificationScope.default == .local)
        #expect(throws: NotificationError.unknownScope("everywhere")) { try NotificationScope(parsing: "everywhere") }
    }

    @Test func onlyLocalSuitesAreLocalOnly() {
        #expect(LocalSuites.isLocalOnly(NotificationSuites.localRecords))
        #expect(LocalSuites.isLocalOnly(NotificationSuites.display))
        #expect(!LocalSuites.isLocalOnly(NotificationSuites.sharedRecords))
        #expect(!LocalSuites.isLocalOnly("groupsync.localx"))
        #expect(!LocalSuites.isLocalOnly("group.com.honorfit.blocker"))
    }

    @Test func requestsAreValidated() throws {
        let content = NotificationContent(title: "Time's up")
        let request = try NotificationRequest(id: "timesUp", content: content)
        #expect(request.minIntervalSeconds == 30)
        #expect(request.ttlSeconds == 3600)
        #expect(request.scope == .local)

        #expect(throws: NotificationError.emptyTitle) { try NotificationRequest(id: "x", content: NotificationContent(title: "")) }
        #expect(throws: NotificationError.invalidID("", reason: "is empty")) { try NotificationRequest(id: "", content: content) }
        #expect(throws: NotificationError.self) { try NotificationRequest(id: "a\nb", content: content) }
        #expect(throws: NotificationError.self) { try NotificationRequest(id: String(repeating: "x", count: 257), content: content) }
        #expect(throws: NotificationError.invalidMinInterval(-1)) { try NotificationRequest(id: "x", content: content, minIntervalSeconds: -1) }
        #expect(throws: NotificationError.self) { try NotificationRequest(id: "x", content: content, minIntervalSeconds: .nan) }
        #expect(throws: NotificationError.invalidTTL(0)) { try NotificationRequest(id: "x", content: content, ttlSeconds: 0) }
        #expect(throws: NotificationError.self) { try NotificationRequest(id: "x", content: content, ttlSeconds: .infinity) }
        _ = try NotificationRequest(id: "x", content: content, minIntervalSeconds: 0)
    }
}
