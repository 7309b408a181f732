import GroupSyncCore
import GroupSyncStore

/// `groupsync fire`: a device-activity monitor callback, reported as the monitor extension would see it.
enum FireCommand: Command {
    static let name = "fire"
    static let summary = "report a monitor callback: record events_…, check guards and run the stored actions"
    static let help = """
        usage: groupsync fire --suite SUITE --activity A --callback C [--event E] [--at MS] [--json]

        Runs the actions the app stored in SUITE under actions_for_{A}_{C} (or actions_for_{A}_{C}_{E}
        for an event callback), in order, then records events_{A}_{C}[_{E}] = the time (epoch ms), unless
        it already holds a later one (a callback reported late with --at). The list is read on every call,
        so editing it changes what the next callback does.

        Each action's guards are checked first, against the history before this callback:
        neverTriggerBefore, skipIfAlreadyTriggeredAfter, skipIfAlreadyTriggeredBefore,
        skipIfAlreadyTriggeredWithinMS, skipIfAlreadyTriggeredBetweenFromDate/ToDate,
        skipIfLargerEventRecordedAfter, skipIfLargerEventRecordedWithinMS,
        skipIfLargerEventRecordedSinceIntervalStarted (larger: used-7 > used-6.5).

        Actions performed, as state in SUITE:
          blockSelection, unblockSelection, resetBlocks   groupsync.block.{selectionId} (true or false; the
                                                           later action on a selection wins across devices),
                                                           blockedSelectionIds and lastBlockUpdate; block and
                                                           unblock name the selection in the action's
                                                           familyActivitySelectionId, which must be a key of
                                                           the suite's familyActivitySelectionIds dictionary
                                                           (optional shieldId: shieldConfiguration_{shieldId}
                                                           becomes shieldConfiguration)
          enableBlockAllMode, disableBlockAllMode          isBlockingAll
          sendNotification                                 groupsync.notification.{identifier}, a pending
                                                           request ({activityName} etc. filled in)
          removePendingNotificationRequests,
          removeAllPendingNotificationRequests             this device's requests not shown yet: pending
                                                           ones deleted, ones waiting for a server "removing"
          removeAllDeliveredNotifications                  this device's delivered (or pending) requests
                                                           become "removing"; one another device fired
                                                           since is dismissed on this device only; also
                                                           sets groupsync.notifications.removeAllDeliveredAt
          startMonitoring, stopMonitoring                  groupsync.monitor.{activity}; stopping first
                                                           deletes the monitor's actions_for_… lists
        Any other type is reported as unsupported and not run.

        The daemon shows each pending request and dismisses each removing one, then records the outcome
        in the request's status (shown, waiting, suppressed, failed: …; removed). fire hands them to a
        running daemon at once. With no daemon they stay pending or removing, and the daemon acts on them
        when it starts: a request then more than an hour old is not shown but marked expired. A request
        is shown by the device that fired it, once: a restart does not show it again.

          --suite SUITE       the App Group suite holding the actions and events
          --activity A        the monitor's activity name (no '_')
          --callback C        intervalDidStart, intervalDidEnd, eventDidReachThreshold,
                              intervalWillStartWarning, intervalWillEndWarning,
                              eventWillReachThresholdWarning
          --event E           the event, for eventDidReachThreshold and eventWillReachThresholdWarning
          --at MS             when the callback fired (epoch ms; default now; not later than now)
          --json              one object: suite, activity, callback, event (if any), actionsKey, eventsKey, firedAt,
                              actions [{index, type, outcome, detail}], notifications, delivery
                              {identifier: status}, removal {identifier: status}
        \(homeHelp)
        """
    static let flags = FlagSpec.with(valued: ["--suite", "--activity", "--callback", "--event", "--at"], switches: ["--json"])

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        _ = try arguments.positionals()
        guard let suite = arguments.value("--suite") else { throw .usage("missing --suite SUITE") }
        guard let activity = arguments.value("--activity") else { throw .usage("missing --activity A") }
        guard let callbackName = arguments.value("--callback") else { throw .usage("missing --callback C") }
        do { try Store.validate(suite: suite, key: "-") } catch { throw error.asCLIError }
        if let problem = OwnSuites.problem(with: suite, usedAs: "--suite") { throw .badInput(problem) }
        if let problem = ActivityNames.problem(with: activity, what: "activity") { throw .badInput(problem) }
        guard let callback = MonitorCallback(rawValue: callbackName) else {
            throw .badInput("'\(callbackName)' is not a monitor callback: use one of \(MonitorCallback.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let event = arguments.value("--event")
        if callback.takesEvent && event == nil { throw .usage("\(callbackName) needs --event E") }
        if !callback.takesEvent && event != nil { throw .usage("\(callbackName) takes no --event") }
        if let event, let problem = ActivityNames.problem(with: event, what: "event") { throw .badInput(problem) }
        let at = Double(try EpochMillisArgument.firedAt(arguments))

        let context = try DeviceContext.open(home: invocation.home(arguments))
        let call = CallbackInvocation(activity: activity, callback: callback, event: event)
        let plan: ActionPlan
        do {
            plan = try context.store.update(suite: suite) { entries throws(StoreError) -> (changes: [String: SuiteChange], result: ActionPlan) in
                let plan = ActionRunner.plan(call, suite: entries.liveValuesByKey, now: at, device: context.store.device.description)
                return (plan.changes, plan)
            }
        } catch { throw error.asCLIError }
        let written = Dictionary(plan.notifications.compactMap { identifier -> (String, Value)? in
            guard case .set(let request)? = plan.changes[AppGroupState.notificationKey(identifier)] else { return nil }
            return (identifier, request)
        }, uniquingKeysWith: { first, _ in first })
        let (handedOver, daemonAnswered) = ActionNotificationDelivery.deliver(plan.notifications + plan.removals.filter { !plan.notifications.contains($0) },
                                                            suite: suite, written: written, context: context)
        let delivered = handedOver.filter { plan.notifications.contains($0.key) }
        let removed = handedOver.filter { plan.removals.contains($0.key) }
            .merging(ActionNotificationDelivery.dismissHere(plan.dismissalsHereOnly, context: context)) { mine, _ in mine }

        if arguments.has("--json") {
            var o = JSONObject()
            o.add("suite", suite)
            o.add("activity", activity)
            o.add("callback", callback.rawValue)
            if let event { o.add("event", event) }
            o.add("actionsKey", call.actionsKey)
            o.add("eventsKey", call.eventsKey)
            o.add("firedAt", .double(at))
            if let problem = plan.actionsProblem { o.add("problem", problem) }
            o.add("actions", .array(plan.reports.map { r in
                .dictionary(["index": .int(Int64(r.index)), "type": .string(r.type), "outcome": .string(r.outcome.rawValue), "detail": .string(r.detail)])
            }))
            o.add("notifications", .array(plan.notifications.map(Value.string)))
            o.add("delivery", .dictionary(delivered.mapValues(Value.string)))
            o.add("removal", .dictionary(removed.mapValues(Value.string)))
            Console.out(o.text)
            return
        }
        let recorded = plan.changes[call.eventsKey] == nil ? "\(call.eventsKey) kept its later time" : "recorded \(call.eventsKey)"
        if let problem = plan.actionsProblem {
            Console.out(problem)
        } else if plan.actionCount == 0 {
            Console.out("no actions stored under \(call.actionsKey); \(recorded)")
        } else {
            for r in plan.reports { Console.out("\(r.index) \(r.type): \(r.outcome.rawValue): \(r.detail)") }
            // Why no daemon answered, asked of the daemon lock once for every request left in the store.
            let unanswered = daemonAnswered || handedOver.isEmpty ? nil : UnansweredDaemon(home: context.home)
            for (identifier, status) in delivered.sorted(by: { $0.key < $1.key }) {
                let waiting = status == ActionNotificationRequest.pending ? unanswered : nil
                Console.out("notification \(identifier): \(waiting.map { "pending (\($0.whenLeftInTheStore("shown")))" } ?? status)")
            }
            for (identifier, status) in removed.sorted(by: { $0.key < $1.key }) where !plan.notifications.contains(identifier) {
                let waiting = status == ActionNotificationRequest.removing ? unanswered : nil
                Console.out("notification \(identifier): \(waiting.map { "removing (\($0.whenLeftInTheStore("dismissed")))" } ?? status)")
            }
            Console.out(recorded)
        }
    }
}
