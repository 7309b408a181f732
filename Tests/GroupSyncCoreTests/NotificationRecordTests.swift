import Testing
@testable import GroupSyncCore

@Suite struct NotificationRecordTests {
    static let phone = try! DeviceID(bytes: Array(repeating: 7, count: 32))
    static let laptop = try! DeviceID(bytes: Array(repeating: 9, count: 32))

    static func record(dismissed: Bool = false) -> NotificationRecord {
        NotificationRecord(id: "timesUp", content: NotificationContent(title: "Time's up", body: "0 min left", level: .timeSensitive),
                           scope: .all, ttlSeconds: 600,
                           stamp: NotificationStamp(generation: 3, postedAtMillis: 1_732_886_400_123, origin: phone),
                           dismissal: dismissed ? .init(atMillis: 1_732_886_401_999, by: laptop) : nil)
    }

    @Test(arguments: [false, true]) func roundTripsThroughTheStoredForm(dismissed: Bool) throws {
        let record = Self.record(dismissed: dismissed)
        let stored = try ValueCodec.decode(ValueCodec.encode(record.value))
        #expect(try NotificationRecord(id: "timesUp", value: stored, suite: record.suite) == record)
    }

    @Test func storedFormIsReadableJSON() {
        let json = JSONWriter.string(for: Self.record(dismissed: true).value)
        #expect(json.contains("\"postedAt\":\"2024-11-29T13:20:00.123Z\""))
        #expect(json.contains("\"dismissed\":true"))
        #expect(json.contains("\"level\":\"timeSensitive\""))
        #expect(json.contains("\"origin\":\"\(Self.phone)\""))
        #expect(!JSONWriter.string(for: Self.record().value).contains("dismissedBy"))
    }

    @Test func scopeDecidesTheSuite() {
        var record = Self.record()
        #expect(record.suite == NotificationSuites.sharedRecords)
        record.scope = .local
        #expect(record.suite == NotificationSuites.localRecords)
    }

    @Test func malformedRecordsNameThePlaceAndTheField() throws {
        var fields: [String: Value] = [:]
        if case .dictionary(let f) = Self.record().value { fields = f }
        func reason(_ edit: (inout [String: Value]) -> Void) -> String {
            var copy = fields
            edit(&copy)
            do {
                _ = try NotificationRecord(id: "k", value: .dictionary(copy), suite: "groupsync.notifications")
                return "accepted"
            } catch {
                return error.description
            }
        }
        #expect(reason { _ in } == "accepted")
        #expect(reason { $0["extra"] = .int(1) } == "accepted")
        #expect(reason { $0["title"] = nil }.contains("groupsync.notifications/k is malformed: 'title' is missing"))
        #expect(reason { $0["generation"] = .string("3") }.contains("'generation' should be an int"))
        #expect(reason { $0["level"] = .string("loud") }.contains("unknown level 'loud'"))
        #expect(reason { $0["postedAt"] = .int(5) }.contains("'postedAt' should be a date"))
        #expect(reason { $0["origin"] = .string("nobody") }.contains("'origin'"))
        #expect(reason { $0["dismissed"] = .bool(true) }.contains("'dismissedAt' is missing"))
        #expect(reason { $0["ttlSeconds"] = .double(-1) }.contains("out of range"))
        #expect(throws: NotificationError.self) { try NotificationRecord(id: "k", value: .string("x"), suite: "s") }
    }

    @Test func theCurrentRecordIsTheLatestPostAcrossScopes() {
        let shared = Self.record()
        var local = Self.record()
        local.scope = .local
        local.stamp = NotificationStamp(generation: 1, postedAtMillis: shared.stamp.postedAtMillis + 1, origin: Self.laptop)
        #expect(NotificationRecord.current([shared, local]) == local)
        #expect(NotificationRecord.current([nil, shared]) == shared)
        #expect(NotificationRecord.current([nil, nil]) == nil)
    }

    @Test func staleAfterTheTTL() {
        let record = Self.record()
        #expect(record.expiresAtMillis == record.stamp.postedAtMillis + 600_000)
        #expect(!record.isStale(atMillis: record.expiresAtMillis - 1))
        #expect(record.isStale(atMillis: record.expiresAtMillis))
    }

    @Test func postsCountGenerationsAndStampTheDevice() throws {
        let request = try NotificationRequest(id: "timesUp", content: NotificationContent(title: "x"), minIntervalSeconds: 0, scope: .all, ttlSeconds: 60)
        guard case .accepted(let first) = NotificationPosting.post(request, current: nil, shownHere: nil, device: Self.phone, nowMillis: 1_000),
              case .accepted(let second) = NotificationPosting.post(request, current: first, shownHere: nil, device: Self.phone, nowMillis: 1_000) else {
            Issue.record("post suppressed"); return
        }
        #expect(first.stamp == NotificationStamp(generation: 1, postedAtMillis: 1_000, origin: Self.phone))
        #expect(second.stamp.generation == 2)
        #expect(second.stamp != first.stamp)
        #expect(second.ttlSeconds == 60 && second.scope == .all && second.suite == "groupsync.notifications")
    }

    @Test func dismissMarksTheCurrentPostOnce() {
        #expect(NotificationPosting.dismiss(current: nil, device: Self.laptop, nowMillis: 5) == .nothingPosted)
        let record = Self.record()
        guard case .accepted(let dismissed) = NotificationPosting.dismiss(current: record, device: Self.laptop, nowMillis: 5) else {
            Issue.record("dismiss refused"); return
        }
        #expect(dismissed.dismissal == .init(atMillis: 5, by: Self.laptop))
        #expect(dismissed.stamp == record.stamp)
        #expect(NotificationPosting.dismiss(current: dismissed, device: Self.phone, nowMillis: 6) == .alreadyDismissed(dismissed))
    }

    @Test func displayStateRoundTrips() throws {
        let record = Self.record()
        let shown = NotificationDisplay.shown(record, as: ServerNotification(number: 42, serverInstance: ":1.7"), atMillis: 1_732_886_400_500)
        #expect(try NotificationDisplay(id: "timesUp", value: shown.value) == shown)
        #expect(try NotificationDisplay(id: "timesUp", value: shown.closed().value) == shown.closed())
        #expect(shown.closed().onScreen == nil && shown.closed().stamp == record.stamp)
        guard case .dictionary(var fields) = shown.value else { return }
        fields["serverNumber"] = .int(0)
        #expect(throws: NotificationError.self) { try NotificationDisplay(id: "timesUp", value: .dictionary(fields)) }
        fields["serverNumber"] = nil
        #expect(throws: NotificationError.self) { try NotificationDisplay(id: "timesUp", value: .dictionary(fields)) }
    }
}
