import Testing
@testable import GroupSyncCore

/// What the daemon does with a `sendNotification` request an action run left, and which requests
/// `removeAllDeliveredNotifications` marks: pure decisions, with the time given.
@Suite struct ActionNotificationRequestTests {
    let now: Int64 = 1_790_000_600_000
    let me = try! DeviceID(bytes: Array(repeating: 1, count: 32)), other = try! DeviceID(bytes: Array(repeating: 2, count: 32))

    func request(_ status: String, requestedAt: Double? = nil, _ extra: [String: Value] = [:]) -> [String: Value] {
        var fields: [String: Value] = ["identifier": .string("n"), "title": .string("Hi"), "status": .string(status)]
        fields["requestedAt"] = .double(requestedAt ?? Double(now))
        return fields.merging(extra) { $1 }
    }

    @Test func onlyAPendingRequestOfThisDeviceIsPostedAndOnlyARemovingOneDismissed() throws {
        let post = try ActionNotificationRequest.post(identifier: "n", request: request("pending"))
        #expect(ActionNotificationRequest.step(identifier: "n", request: request("pending"), writtenBy: me, device: me, nowMillis: now) == .post(post))
        #expect(ActionNotificationRequest.step(identifier: "n", request: request("pending"), writtenBy: other, device: me, nowMillis: now) == .othersRequest,
                "another device's request is its daemon's to show")
        // The device a request names decides, whoever wrote it (`fire` hands a request to the device it ran for).
        let named = request("pending", ["device": .string(other.description)])
        #expect(ActionNotificationRequest.step(identifier: "n", request: named, writtenBy: me, device: me, nowMillis: now) == .othersRequest)
        #expect(ActionNotificationRequest.step(identifier: "n", request: named, writtenBy: me, device: other, nowMillis: now) == .post(post))
        for settled in ["shown", "waiting", "suppressed", "removed", "expired", "failed: x"] {
            #expect(ActionNotificationRequest.step(identifier: "n", request: request(settled), writtenBy: me, device: me, nowMillis: now) == .leave, "\(settled)")
        }
        #expect(ActionNotificationRequest.step(identifier: "n", request: request("removing"), writtenBy: me, device: me, nowMillis: now) == .dismiss)
    }

    @Test func aRequestPendingPastAnHourIsNotShownAndAYoungerOneKeepsWhatIsLeftOfIt() throws {
        let stale = request("pending", requestedAt: Double(now) - 3_600_001)
        #expect(ActionNotificationRequest.step(identifier: "n", request: stale, writtenBy: me, device: me, nowMillis: now) == .settle("expired"))
        let young = request("pending", requestedAt: Double(now) - 600_000)
        guard case .post(let post) = ActionNotificationRequest.step(identifier: "n", request: young, writtenBy: me, device: me, nowMillis: now) else {
            Issue.record("not posted")
            return
        }
        #expect(post.ttlSeconds == 3000)
        #expect(post.minIntervalSeconds == 0 && post.scope == .local)
    }

    @Test func thePostCarriesThePayloadsFields() throws {
        let post = try ActionNotificationRequest.post(identifier: "n", request: request("pending", ["subtitle": .string("Sub"), "body": .string("Body"),
                                                                                                   "interruptionLevel": .string("critical")]))
        #expect(post.content == NotificationContent(title: "Hi", body: "Sub\nBody", level: .critical))
        #expect(try ActionNotificationRequest.post(identifier: "n", request: [:]).content.title == "n", "no title: the identifier")
        // An unknown level is ignored, as the library ignores it: shown at the default level, not dropped.
        guard case .post(let loud) = ActionNotificationRequest.step(identifier: "n", request: request("pending", ["interruptionLevel": .string("loud")]),
                                                                    writtenBy: me, device: me, nowMillis: now) else {
            Issue.record("a request with an unknown level was not posted")
            return
        }
        #expect(loud.content.level == .default)
    }

    @Test func removeAllDeliveredMarksThisDevicesDeliveredRequestsOnly() {
        let end = CallbackInvocation(activity: "focus", callback: .intervalDidEnd, event: nil)
        let values: [String: Value] = [
            end.actionsKey: .array([.dictionary(["type": .string("removeAllDeliveredNotifications")])]),
            AppGroupState.notificationKey("mine"): .dictionary(request("shown", ["device": .string("ME")])),
            AppGroupState.notificationKey("waiting"): .dictionary(request("waiting", ["device": .string("ME")])),
            AppGroupState.notificationKey("theirs"): .dictionary(request("shown", ["device": .string("PEER")])),
            AppGroupState.notificationKey("gone"): .dictionary(request("removed", ["device": .string("ME")])),
            AppGroupState.notificationKey("quiet"): .dictionary(request("suppressed", ["device": .string("ME")])),
        ]
        let plan = ActionRunner.plan(end, suite: values, now: Double(now), device: "ME")
        #expect(plan.removals == ["mine", "waiting"])
        // The peer's request is left alone, but this device may show that identifier from its own firing.
        #expect(plan.dismissalsHereOnly == ["theirs"])
        #expect(plan.reports.first?.detail == "2 delivered notifications to be dismissed; 1 another device fired since, dismissed on this device only")
        for id in ["mine", "waiting"] {
            guard case .set(.dictionary(let marked))? = plan.changes[AppGroupState.notificationKey(id)] else {
                Issue.record("\(id) not marked")
                continue
            }
            #expect(marked["status"] == .string("removing"))
        }
        for id in ["theirs", "gone", "quiet"] { #expect(plan.changes[AppGroupState.notificationKey(id)] == nil, "\(id)") }
    }

    /// Requests are acted on in the order they were fired: by time requested, then by their place in the firing,
    /// whatever their identifiers; a key that holds no request comes last.
    @Test func requestsAreActedOnInTheOrderTheyWereFired() {
        let version = Version(hlc: HLC(wallMillis: 1, logical: 0), origin: me)
        func entry(_ id: String, _ value: Value) -> Entry { Entry(suite: "g", key: "groupsync.notification." + id, value: value, version: version) }
        let entries = [entry("z-later", .dictionary(request("pending", requestedAt: Double(now + 1_000), ["order": .int(0)]))),
                       entry("b-second", .dictionary(request("pending", requestedAt: Double(now), ["order": .int(1)]))),
                       entry("a-not-a-request", .string("x")),
                       entry("c-first", .dictionary(request("pending", requestedAt: Double(now), ["order": .int(0)])))]
        let ordered = ActionNotificationRequest.inFiringOrder(entries).map { String($0.key.dropFirst("groupsync.notification.".count)) }
        #expect(ordered == ["c-first", "b-second", "z-later", "a-not-a-request"])
    }

    @Test func aRequestRecordsTheDeviceItFiredOn() {
        let start = CallbackInvocation(activity: "focus", callback: .intervalDidStart, event: nil)
        let values: [String: Value] = [start.actionsKey: .array([.dictionary(["type": .string("sendNotification"),
                                                                               "payload": .dictionary(["identifier": .string("n"), "title": .string("t")])])])]
        guard case .set(.dictionary(let made))? = ActionRunner.plan(start, suite: values, now: Double(now), device: "ME").changes[AppGroupState.notificationKey("n")] else {
            Issue.record("no request")
            return
        }
        #expect(made["device"] == .string("ME") && made["status"] == .string("pending"))
    }
}
