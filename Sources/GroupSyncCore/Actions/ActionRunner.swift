/// Plans what a monitor callback does to an App Group suite: pure, from the suite's values and the time.
///
/// The stored list is read afresh on every callback, so editing it changes what the next callback
/// does without restarting anything. Actions run in order, each seeing the effects of those before
/// it; the callback's `events_…` key is recorded after them, as the monitor extension does.
public enum ActionRunner {
    /// `device`: the ID of the device the callback fired on, kept in each notification request it makes so
    /// that only this device's daemon shows it and only this device's `removeAllDeliveredNotifications`
    /// takes it down (the suite, and so the request, replicates to the user's other devices).
    public static func plan(_ invocation: CallbackInvocation, suite values: [String: Value], now: Double, device: String? = nil) -> ActionPlan {
        var run = Execution(state: values, device: device, plan: ActionPlan(invocation: invocation, firedAt: now, actionCount: 0))
        let history = FiredEventHistory(values: values)
        switch values[invocation.actionsKey] {
        case nil: break
        case .array(let actions)?:
            run.plan.actionCount = actions.count
            for (index, raw) in actions.enumerated() {
                guard case .dictionary(let action) = raw else {
                    run.plan.reports.append(ActionReport(index: index + 1, type: "?", outcome: .invalid, detail: "not a dictionary"))
                    continue
                }
                guard case .string(let type)? = action["type"], !type.isEmpty else {
                    run.plan.reports.append(ActionReport(index: index + 1, type: "?", outcome: .invalid, detail: "no type"))
                    continue
                }
                if let problem = ActionGuards.problem(in: action) {
                    run.plan.reports.append(ActionReport(index: index + 1, type: type, outcome: .invalid, detail: problem))
                    continue
                }
                if let reason = ActionGuards(action: action).skipReason(for: invocation, now: now, history: history) {
                    run.plan.reports.append(ActionReport(index: index + 1, type: type, outcome: .skipped, detail: reason))
                    continue
                }
                // Performed on a copy, kept only if every value it writes can be stored: a notification whose
                // filled-in text outgrew the store's limit is this action's problem, not the whole callback's.
                var attempt = run
                let (outcome, detail) = attempt.perform(type, action, invocation, now)
                if let oversized = attempt.plan.changes.first(where: { key, change in
                    guard case .set(let value) = change, run.plan.changes[key] != change else { return false }
                    return ValueCodec.encode(value).count > ValueCodec.maxStoredBytes
                }) {
                    run.plan.reports.append(ActionReport(index: index + 1, type: type, outcome: .invalid,
                                                         detail: "it would write \(oversized.key) larger than the \(ValueCodec.maxStoredBytes)-byte limit of a value"))
                    continue
                }
                run = attempt
                run.plan.reports.append(ActionReport(index: index + 1, type: type, outcome: outcome, detail: detail))
            }
        case .some(let other):
            run.plan.actionsProblem = "\(invocation.actionsKey) holds a \(other.typeName), not a list of actions; nothing was run"
        }
        // The last time the callback fired: a firing reported late (`fire --at` in the past) does not move it back.
        if let last = values[invocation.eventsKey]?.epochMillis, Double(last) > now {} else {
            run.change(invocation.eventsKey, .set(.double(now)))
        }
        return run.plan
    }
}

/// One callback's run: the suite as the actions so far left it, and the plan being built.
private struct Execution {
    var state: [String: Value]
    let device: String?
    /// Notifications of this firing given an identifier by default, so far.
    var defaultIdentifiers = 0
    var plan: ActionPlan

    mutating func change(_ key: String, _ change: SuiteChange) {
        plan.changes[key] = change
        switch change {
        case .set(let value): state[key] = value
        case .delete: state[key] = nil
        }
    }

    mutating func perform(_ type: String, _ action: [String: Value], _ invocation: CallbackInvocation, _ now: Double) -> (ActionReport.Outcome, String) {
        let triggeredBy = invocation.actionsKey
        switch type {
        case "blockSelection", "unblockSelection":
            guard case .string(let id)? = action["familyActivitySelectionId"] else { return (.invalid, "no familyActivitySelectionId") }
            guard case .dictionary(let known)? = state[AppGroupState.selectionIDs], known[id] != nil else {
                return (.invalid, "no selection '\(id)' in \(AppGroupState.selectionIDs)")
            }
            if let problem = SelectionBlocks.problem(withSelectionID: id) { return (.invalid, problem) }
            let blocking = type == "blockSelection"
            if blocking, case .string(let shield)? = action["shieldId"], let config = state[AppGroupState.shieldConfiguration(shield)] {
                change(AppGroupState.fallbackShieldConfiguration, .set(config))
            }
            change(SelectionBlocks.key(id), .set(.bool(blocking)))
            updateBlockedList(triggeredBy: triggeredBy, now: now)
            return (.done, type == "blockSelection" ? "blocked '\(id)'" : "unblocked '\(id)'")
        case "resetBlocks":
            // A listed selection that cannot name a key has no key to clear: it is left out of the list instead.
            let blocked = SelectionBlocks.blocked(in: state)
            let keyless = blocked.filter { SelectionBlocks.problem(withSelectionID: $0) != nil }
            for id in blocked.subtracting(keyless).sorted() { change(SelectionBlocks.key(id), .set(.bool(false))) }
            updateBlockedList(triggeredBy: triggeredBy, now: now, leavingOut: keyless)
            change(AppGroupState.currentBlockedSelection, .delete)
            return (.done, "no selection blocked")
        case "enableBlockAllMode":
            change(AppGroupState.isBlockingAll, .set(.bool(true)))
            return (.done, "blocking everything")
        case "disableBlockAllMode":
            change(AppGroupState.isBlockingAll, .delete)
            return (.done, "block-all mode off")
        case "sendNotification":
            guard case .dictionary(let payload)? = action["payload"] else { return (.invalid, "no payload") }
            var request = payload
            for field in ["title", "subtitle", "body"] {
                guard case .string(let text)? = payload[field] else { continue }
                do { request[field] = .string(try invocation.placeholders.fill(text, field: field)) } catch { return (.invalid, error.description) }
            }
            let identifier: String
            if case .string(let given)? = payload["identifier"] {
                identifier = given
            } else {
                // One per request, as the library's UUID is: a second notification of the same firing used
                // to get the first one's identifier and replace it. The first keeps the plain form.
                defaultIdentifiers += 1
                identifier = "\(triggeredBy)@\(Int64(now))" + (defaultIdentifiers == 1 ? "" : "#\(defaultIdentifiers)")
            }
            guard !identifier.isEmpty, identifier.utf8.count <= 200, !identifier.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
                return (.invalid, "the notification identifier must be 1 to 200 bytes without control characters")
            }
            // GroupSync's own ("time's up", the countdown): a request under one would later let the app's
            // removals take them down (found by review).
            guard !NotificationRequest.isReserved(identifier) else {
                return (.invalid, "the notification identifier begins with '\(NotificationRequest.reservedPrefix)', which GroupSync keeps for its own notifications")
            }
            request["identifier"] = .string(identifier)
            request["requestedAt"] = .double(now)
            // Its place among this firing's requests, which share `requestedAt`: kept in the order the actions list them.
            request["order"] = .int(Int64(plan.notifications.count + 1))
            request["triggeredBy"] = .string(triggeredBy)
            request["status"] = .string(ActionNotificationRequest.pending)
            if let device { request["device"] = .string(device) }
            change(AppGroupState.notificationKey(identifier), .set(.dictionary(request)))
            plan.notifications.append(identifier)
            // Ignored as the library ignores it, but said: a typo otherwise showed at the default level in silence.
            var unknownLevel = ""
            if case .string(let level)? = payload["interruptionLevel"], (try? NotificationLevel(parsing: level)) == nil {
                unknownLevel = "; its interruptionLevel '\(level)' is unknown and ignored (passive, active, timeSensitive, critical)"
            }
            return (.done, "notification '\(identifier)' requested (pending until the notifier delivers it)\(unknownLevel)")
        case "removeAllDeliveredNotifications":
            // The timestamp is kept for apps that read it; what takes the notifications down is each delivered
            // request of this device marked `removing`, which the daemon dismisses (now, or when it next starts)
            // and marks `removed`. A pending one is taken too: it is only pending because no daemon ran, and
            // showing it later would show what the app has already taken down.
            change(AppGroupState.removeAllDeliveredAt, .set(.double(now)))
            var removing: [String] = []
            for key in state.keys.sorted() {
                guard let identifier = AppGroupState.notificationIdentifier(ofKey: key), case .dictionary(var request)? = state[key],
                      let status = ActionNotificationRequest.status(of: request), ActionNotificationRequest.delivered.contains(status) else { continue }
                if isAnotherDevices(request) {
                    if !plan.dismissalsHereOnly.contains(identifier) { plan.dismissalsHereOnly.append(identifier) }
                    continue
                }
                request["status"] = .string(ActionNotificationRequest.removing)
                change(key, .set(.dictionary(request)))
                removing.append(identifier)
            }
            plan.removals.append(contentsOf: removing.filter { !plan.removals.contains($0) })
            let elsewhere = plan.dismissalsHereOnly.count
            return (.done, "\(removing.count) delivered notification\(removing.count == 1 ? "" : "s") to be dismissed"
                        + (elsewhere == 0 ? "" : "; \(elsewhere) another device fired since, dismissed on this device only"))
        case "removePendingNotificationRequests":
            guard case .array(let items)? = action["identifiers"] else { return (.invalid, "no identifiers") }
            let identifiers = items.compactMap { if case .string(let s) = $0 { s } else { nil } }
            let removed = removePending(Set(identifiers).sorted().map(AppGroupState.notificationKey))
            return (.done, "removed \(removed) pending request\(removed == 1 ? "" : "s")")
        case "removeAllPendingNotificationRequests":
            let removed = removePending(state.keys.filter { AppGroupState.notificationIdentifier(ofKey: $0) != nil }.sorted())
            return (.done, "removed \(removed) pending request\(removed == 1 ? "" : "s")")
        case "startMonitoring":
            let name: String
            if case .string(let given)? = action["activityName"] { name = given } else { name = invocation.activity }
            if let problem = ActivityNames.problem(with: name, what: "activity") { return (.invalid, problem) }
            change(AppGroupState.monitorKey(name), .set(.dictionary([
                "activityName": .string(name), "status": .string("monitoring"), "startedAt": .double(now),
                "triggeredBy": .string(triggeredBy), "request": .dictionary(action),
            ])))
            return (.done, "monitoring '\(name)'")
        case "stopMonitoring":
            var names: [String] = []
            if case .array(let items)? = action["activityNames"] { names = items.compactMap { if case .string(let s) = $0 { s } else { nil } } }
            else if case .string(let one)? = action["activityName"] { names = [one] }
            else { names = [invocation.activity] }
            if let bad = names.lazy.compactMap({ ActivityNames.problem(with: $0, what: "activity") }).first { return (.invalid, bad) }
            var cleared = 0
            for name in names {
                // Clear the monitor's actions *before* stopping it: stopping fires intervalDidEnd as if
                // the schedule had ended (seed, section 7), and with no actions left it does nothing.
                for key in state.keys.filter({ EntryName.starts($0, with: "actions_for_\(name)_") }).sorted() {
                    change(key, .delete)
                    cleared += 1
                }
                change(AppGroupState.monitorKey(name), .set(.dictionary([
                    "activityName": .string(name), "status": .string("stopped"), "stoppedAt": .double(now),
                    "triggeredBy": .string(triggeredBy),
                ])))
            }
            return (.done, "cleared \(cleared) action list\(cleared == 1 ? "" : "s"), then stopped \(names.map { "'\($0)'" }.joined(separator: ", "))")
        default:
            return (.unsupported, "GroupSync does not perform '\(type)'; it was not run")
        }
    }

    /// Whether `request` names another device than this one as its own (a request without a device, written
    /// before the field, counts as this device's).
    func isAnotherDevices(_ request: [String: Value]) -> Bool {
        guard let owner = ActionNotificationRequest.device(of: request), let device else { return false }
        return owner != device
    }

    /// Takes back this device's requests among `keys` that are not on a screen yet, as iOS's pending removals
    /// do: one never handed to a daemon (`pending`) is deleted; one a daemon holds until a notification server
    /// appears (`waiting`) is marked `removing`, for the daemon to drop. A request already shown (delivered:
    /// `removeAllDeliveredNotifications` takes those down) and another device's are left alone. Returns how
    /// many were taken back.
    mutating func removePending(_ keys: [String]) -> Int {
        var count = 0
        for key in keys {
            guard let identifier = AppGroupState.notificationIdentifier(ofKey: key), case .dictionary(var request)? = state[key] else { continue }
            if isAnotherDevices(request) { continue }
            switch ActionNotificationRequest.status(of: request) {
            case ActionNotificationRequest.pending?:
                change(key, .delete)
            case ActionNotificationRequest.waiting?:
                request["status"] = .string(ActionNotificationRequest.removing)
                change(key, .set(.dictionary(request)))
                if !plan.removals.contains(identifier) { plan.removals.append(identifier) }
            default:
                continue
            }
            count += 1
        }
        return count
    }

    /// Writes the list apps read from the per-selection keys (`SelectionBlocks`) as the actions left them.
    mutating func updateBlockedList(triggeredBy: String, now: Double, leavingOut: Set<String> = []) {
        let list = SelectionBlocks.list(SelectionBlocks.blocked(in: state).subtracting(leavingOut))
        change(AppGroupState.blockedSelectionIDs, .set(list))
        change(AppGroupState.lastBlockUpdate, .set(.dictionary(["triggeredBy": .string(triggeredBy), "at": .double(now), "blockedSelectionIds": list])))
    }
}
