import Testing
@testable import GroupSyncCore

@Suite struct NotificationPlaceholderTests {
    let values = NotificationPlaceholders([
        .activityName: "evening",
        .callbackName: "eventDidReachThreshold",
        .eventName: "used-0.25",
        .applicationOrDomainDisplayName: "Instagram",
    ])

    @Test func knownPlaceholdersAreFilled() {
        #expect(values.fill("{applicationOrDomainDisplayName} is blocked") == "Instagram is blocked")
        #expect(values.fill("{activityName}/{callbackName}/{eventName}") == "evening/eventDidReachThreshold/used-0.25")
        #expect(values.fill("{eventName}{eventName}") == "used-0.25used-0.25")
    }

    @Test func unknownOrUnfilledPlaceholdersStayAsWritten() {
        #expect(values.fill("Hi {userName}, {eventName}") == "Hi {userName}, used-0.25")
        let onlyApp = NotificationPlaceholders([.applicationOrDomainDisplayName: "Safari"])
        #expect(onlyApp.fill("{activityName}: {applicationOrDomainDisplayName}") == "{activityName}: Safari")
        #expect(NotificationPlaceholders().fill("{eventName}") == "{eventName}")
    }

    @Test func strayBracesAreText() {
        #expect(values.fill("{") == "{")
        #expect(values.fill("}{") == "}{")
        #expect(values.fill("{{eventName}}") == "{used-0.25}")
        #expect(values.fill("{eventName") == "{eventName")
        #expect(values.fill("{}") == "{}")
        #expect(values.fill("a { b } c") == "a { b } c")
    }

    @Test func valuesAreNotExpandedAgain() {
        let tricky = NotificationPlaceholders([.applicationOrDomainDisplayName: "{eventName}", .eventName: "boom"])
        #expect(tricky.fill("{applicationOrDomainDisplayName} {eventName}") == "{eventName} boom")
    }

    @Test func nonASCIIAroundPlaceholdersSurvives() {
        let app = NotificationPlaceholders([.applicationOrDomainDisplayName: "微博"])
        #expect(app.fill("「{applicationOrDomainDisplayName}」はブロック中 🚫") == "「微博」はブロック中 🚫")
        #expect(app.fill("é{\u{301}applicationOrDomainDisplayName}") == "é{\u{301}applicationOrDomainDisplayName}")
    }

    @Test func contentFillsTitleAndBodyAndKeepsTheLevel() throws {
        let content = try NotificationContent(title: "{eventName}", body: "in {activityName}", level: .passive).filling(values)
        #expect(content == NotificationContent(title: "used-0.25", body: "in evening", level: .passive))
    }

    /// A value repeated by many placeholders is measured before it is built, and refused past the limit: a
    /// short title could otherwise make gigabytes (found by review). At the limit it is filled.
    @Test func textThatFillingWouldMakeTooLongIsRefusedBeforeItIsBuilt() throws {
        let value = String(repeating: "A", count: 20_000)
        let placeholders = NotificationPlaceholders([.activityName: value])
        let title = String(repeating: "{activityName}", count: 2_000)
        #expect(throws: NotificationError.filledTooLong(field: "title", bytes: 40_000_000)) {
            try NotificationContent(title: title).filling(placeholders)
        }
        let limit = NotificationPlaceholders.maxFilledBytes
        let exact = String(repeating: "{activityName}", count: limit / 20_000) + String(repeating: "é", count: limit % 20_000 / 2)
        #expect(try placeholders.fill(exact, field: "body").utf8.count == limit)
        #expect(throws: NotificationError.filledTooLong(field: "body", bytes: limit + 1)) { try placeholders.fill(exact + "x", field: "body") }
        #expect(try placeholders.fill("{a}{activityName", field: "body") == "{a}{activityName", "text kept as written is counted too")
    }
}
