import GroupSyncCore
import GroupSyncNotify
import GroupSyncStore

/// The daemon's notifications: posts and dismissals from the control socket, records replicated from peers,
/// the shield-shown signal, the balance's "time's up", and the requests and removals `fire`'s actions leave in
/// an app's suite (`ActionNotificationRequest`). Everything that touches libnotify runs on one
/// worker thread: libnotify and GLib are not thread-safe, and a hung notification server must never stall
/// replication.
///
/// State lives in the store (records, display state, debounce times), so a restart resumes where it was.
/// When there is no session bus or no server, the service says so once and keeps the IDs whose posts still
/// have to be shown (`NotificationServerWait`): each waits only until its time to live runs out, and is tried
/// again on activity, plus on a timer only while a session bus is there. No timer runs when nothing is
/// pending, or with no bus at all.
final class NotificationService: @unchecked Sendable {
    private let store: Store
    private let presenter: NotificationPresenter
    private let log: DaemonLog
    private let clock: @Sendable () -> Int64
    let timesUp: TimesUpNotifications

    /// On the wall clock: the worker's one long wait is for the end of the day (time's up and the countdown go
    /// then), a time of day. As a span on the monotonic clock it slept through a suspend: a laptop closed in
    /// the evening woke to yesterday's "time's up" for hours (found by review).
    private let jobs = Condition.onWallClock()
    private nonisolated(unsafe) var queue: [@Sendable () -> Void] = []
    private nonisolated(unsafe) var changedPending = false
    /// `waiting` is not empty, as the worker last saw it: published under `jobs` for `changed`.
    private nonisolated(unsafe) var retriesOnActivity = false
    private nonisolated(unsafe) var running = true
    /// The worker thread runs `workerLoop` (under `jobs`): `stop` waits for it to end.
    private nonisolated(unsafe) var workerRunning = false

    // Worker-thread state.
    private nonisolated(unsafe) var cursor: Int64 = 0
    private nonisolated(unsafe) var waiting = NotificationServerWait()
    private nonisolated(unsafe) var saidUnavailable = false
    private nonisolated(unsafe) var lastRetryMillis: Int64 = 0
    /// When the balance must be looked at again with no write to prompt it: the end of the day while "time's
    /// up" or the countdown is shown, as the day's new allowance ends either (`TimesUpNotifications.check`).
    private nonisolated(unsafe) var balanceRecheckAtMillis: Int64?
    /// This device's action requests left `waiting` for a notification server: identifier → the post that
    /// waits and the suites holding a request for it. When that very post is shown later (a server appeared),
    /// their status becomes `shown`, so that it records the outcome as `fire --help` says, and pending
    /// removals leave a shown one alone. Another post of the identifier shown instead ends the wait unmarked.
    private nonisolated(unsafe) var waitingActionRequests: [String: (post: NotificationStamp, suites: Set<String>)] = [:]
    /// Shield-shown posts left waiting for a notification server: identifier → the post that waits and where
    /// its `…LastSentAt` goes, written when that post is shown (the seed stamps a sent notification). Kept in
    /// memory only: after a restart a late shield post goes unstamped, and the next one is not held back by it.
    private nonisolated(unsafe) var waitingShieldStamps: [String: (post: NotificationStamp, suite: String, key: String)] = [:]
    /// The `…LastSentAt` this device last wrote for each shield configuration: another device's shield may have
    /// written the suite's since (worker thread only).
    private nonisolated(unsafe) var ownShieldStamps: [ShieldStampKey: Value] = [:]
    /// Records whose showing the server refused or failed (worker thread only): the scan of changes that follows
    /// a post does not send the very same record again, right after the command was told it failed; a new
    /// post, a dismiss or a restart does.
    private nonisolated(unsafe) var failedRecords: [String: [NotificationRecord]] = [:]
    private struct ShieldStampKey: Hashable {
        let suite: String
        let key: String
    }

    /// A device's clock minus this one's, as a session last measured it (nil: never measured): a post's TTL runs
    /// on the clock of the device that posted it. Set once, before the worker starts.
    nonisolated(unsafe) var clockOffset: @Sendable (DeviceID) -> Int64? = { _ in nil }

    init(store: Store, notifier: any Notifier, log: DaemonLog, clock: @escaping @Sendable () -> Int64,
         environment: [String: String] = [:]) {
        self.store = store
        self.presenter = NotificationPresenter(notifier: notifier, device: store.device)
        self.log = log
        self.clock = clock
        self.timesUp = TimesUpNotifications(environment: environment)
    }

    /// The worker thread's name in `/proc/<pid>/task/*/comm`.
    static let threadName = "gs-notify"

    /// False when its thread could not be started.
    @discardableResult
    func start() -> Bool {
        jobs.locked { workerRunning = true }
        let started = spawnThread(name: Self.threadName) { [self] in
            workerLoop()
            jobs.locked { workerRunning = false }
            jobs.broadcast()
        }
        if !started { jobs.locked { workerRunning = false } }
        return started
    }

    /// How long `stop` lets the worker finish the job in hand.
    static let stopWaitMillis: Int64 = 2_000

    /// Stops the worker once the job in hand is done, waiting at most `stopWaitMillis`. Not waiting, a daemon
    /// stopped between a server's answer and its note of what is shown showed the notification again, in
    /// place, after its restart (found by CI); not waiting for ever, a server that hangs cannot hold the
    /// daemon's exit.
    func stop() {
        jobs.locked { running = false }
        jobs.broadcast()
        let deadline = monotonicMillis() + Self.stopWaitMillis
        jobs.locked { while workerRunning, monotonicMillis() < deadline { jobs.wait(millis: 50) } }
    }

    /// Something was committed on this machine; `relevant`: it touched notification records or the balance.
    /// The worker is woken only then, or when it waits for a notification server (any activity is a chance
    /// to look for one), so a write elsewhere costs no thread switch.
    func changed(relevant: Bool) {
        let wake = jobs.locked { () -> Bool in
            guard relevant || retriesOnActivity else { return false }
            changedPending = true
            return true
        }
        if wake { jobs.broadcast() }
    }

    /// Runs `body` on the worker thread and waits for its answer.
    func onWorker(_ body: @escaping @Sendable (NotificationService) -> String) -> String {
        let answer = Answer()
        jobs.locked { queue.append { [self] in answer.set(body(self)) } }
        jobs.broadcast()
        return answer.wait()
    }

    // MARK: Requests (worker thread)

    func post(_ request: NotificationRequest) -> NotificationAnswer {
        let now = clock()
        do {
            let current = try currentRecord(request.id)
            let shownHere = try store.entry(suite: NotificationSuites.display, key: request.id)?.value.map { value throws in
                try NotificationDisplay(id: request.id, value: value)
            }
            switch NotificationPosting.post(request, current: current, shownHere: shownHere, device: store.device, nowMillis: now,
                                            originClockOffsetMillis: originClockOffset(of: current)) {
            case .suppressed(let last, let until):
                log.write("event=notification-suppressed id=\(quoted(request.id)) last_posted_ms_ago=\(now - last) until_ms=\(until - now)")
                return .done(id: request.id, result: .suppressed, retryInSeconds: Double(until - now) / 1000)
            case .accepted(let record):
                try store.set(record.value, suite: record.suite, key: record.id)
                if let replaced = record.replacedRecordSuite { _ = try store.delete(suite: replaced, key: record.id) }
                let answer = answer(for: present(request.id), id: request.id)
                // Another device's post of the ID, made at the same time or since, may have been merged meanwhile:
                // then it is the one shown, and the answer says so rather than call this text shown (found by
                // review: both devices answered "shown" for their own text, and one of the texts was on no screen).
                if case .done(let id, let result, _, _) = answer, result == .shown || result == .unchanged,
                   let winner = try currentRecord(request.id), winner.stamp != record.stamp, winner.stamp.origin != store.device {
                    return .done(id: id, result: result, reason: "another device's post of this ID (\(winner.stamp.origin.short)), made meanwhile, is the one shown")
                }
                return answer
            }
        } catch {
            return .refused("\(error)")
        }
    }

    func dismiss(id: String) -> NotificationAnswer {
        do {
            let records = try self.records(id)
            if case .nothingPosted = NotificationPosting.dismiss(current: NotificationRecord.current(records), device: store.device, nowMillis: clock()) {
                return .refused("no notification '\(id)' was posted", notFound: true)
            }
            // Every record of the ID, not only the newest: an older `--scope all` post still shown on peers,
            // under a newer local one, must close everywhere too.
            for record in records {
                if case .accepted(let dismissed) = NotificationPosting.dismiss(current: record, device: store.device, nowMillis: clock()) {
                    try store.set(dismissed.value, suite: dismissed.suite, key: dismissed.id)
                }
            }
            return answer(for: present(id), id: id, dismissing: true)
        } catch {
            return .refused("\(error)")
        }
    }

    /// The seed's shield-shown notification: the configuration written beforehand in the app's suite, debounced
    /// by the `…LastSentAt` kept beside it, written only once the notification is shown.
    func shield(suite: String, configKey: String, app: String) -> NotificationAnswer {
        if let problem = OwnSuites.problem(with: suite, usedAs: "the shield notification") { return .refused(problem, badInput: true) }
        let now = clock()
        do {
            let lastSentAtKey = ShieldNotificationConfig.lastSentAtKey(configKey: configKey)
            let stored = try store.entry(suite: suite, key: lastSentAtKey)
            let lastSentAt = ShieldNotification.lastSentAt(stored: stored?.value, writtenBy: stored?.version.origin, device: store.device,
                                                           ownStamp: ownShieldStamps[ShieldStampKey(suite: suite, key: lastSentAtKey)])
            let outcome = try ShieldNotification.decide(
                config: try store.entry(suite: suite, key: configKey)?.value,
                lastSentAt: lastSentAt,
                suite: suite, configKey: configKey, appName: app, nowMillis: now)
            switch outcome {
            case .suppressed(let last, let until):
                log.write("event=shield-notification-suppressed suite=\(quoted(suite)) last_sent_ms_ago=\(now - last)")
                return .done(id: nil, result: .suppressed, retryInSeconds: Double(until - now) / 1000)
            case .post(let request, let lastSentAt):
                let answer = post(request)
                // Stamped only once shown (or already on screen): a post still waiting for a server, or one
                // the server refused, was not sent, and must not hold back the next one. A waiting one is
                // stamped when a server shows it (`markWaitingShown`).
                if case .done(_, let result, _, _) = answer {
                    if result == .shown || result == .unchanged { try stampShield(lastSentAt, suite: suite, key: lastSentAtKey) }
                    if result == .waiting, let waitingPost = try currentRecord(request.id)?.stamp {
                        waitingShieldStamps[request.id] = (waitingPost, suite, lastSentAtKey)
                    }
                }
                return answer
            }
        } catch let error as NotificationError {
            // The app has not written its configuration, or wrote something of another shape: a missing key
            // and bad data, not a failing machine, so the CLI exits 1 or 2 as for `get` and `set`.
            if case .missingConfig = error { return .refused("\(error)", notFound: true) }
            return .refused("\(error)", badInput: true)
        } catch {
            return .refused("\(error)")
        }
    }

    /// Writes a shield post's `…LastSentAt` where the seed keeps it, and remembers it as this device's own.
    private func stampShield(_ lastSentAt: Value, suite: String, key: String) throws {
        ownShieldStamps[ShieldStampKey(suite: suite, key: key)] = lastSentAt
        try store.set(lastSentAt, suite: suite, key: key)
    }

    /// The `sendNotification` requests and removals action runs left in `suite` (`fire` hands them over as soon
    /// as it has run), acted on now; answers each of this device's requests with its status afterwards.
    ///
    /// `handedOver`: the requests the run wrote, by identifier. One that another device's request replaced
    /// before this look (both devices fired the same callback at once, and the other's write won) is shown
    /// from here all the same, without a record: each device that fired shows its request once. Found by
    /// review: the device whose write lost never showed it, and its `fire` said `pending`.
    func settleActionRequests(suite: String, handedOver: [String: [String: Value]]) -> String {
        do {
            let entries = ActionNotificationRequest.inFiringOrder(try store.liveEntries(suite: suite, keyPrefix: AppGroupState.notificationPrefix))
            var object = JSONObject()
            object.add("ok", true)
            // Every request is settled; the answer keeps one status per identifier as Swift compares them: two
            // keys the store keeps apart ("café" composed and decomposed) are one dictionary key, and a
            // dictionary built assuming unique keys stopped the daemon.
            var settled = Dictionary(entries.compactMap { entry -> (String, Value)? in
                guard let identifier = AppGroupState.notificationIdentifier(ofKey: entry.key) else { return nil }
                return settle(entry).map { (identifier, Value.string($0)) }
            }, uniquingKeysWith: { first, _ in first })
            for entry in entries {
                guard let identifier = AppGroupState.notificationIdentifier(ofKey: entry.key), settled[identifier] == nil,
                      let ours = handedOver[identifier], case .dictionary(let request)? = entry.value,
                      ActionNotificationRequest.isOthers(request, writtenBy: entry.version.origin, device: store.device) else { continue }
                if case .post(let post) = ActionNotificationRequest.step(identifier: identifier, request: ours, writtenBy: store.device,
                                                                         device: store.device, nowMillis: clock()) {
                    let status = self.post(post).postedStatus
                    log.write("event=action-notification suite=\(quoted(suite)) id=\(quoted(identifier)) status=\(quoted(status)) replaced_by_peer=true")
                    settled[identifier] = .string(status)
                }
            }
            object.add("requests", .dictionary(settled))
            return object.text
        } catch {
            return ControlResponse.error("\(error)")
        }
    }

    // MARK: Worker

    private func workerLoop() {
        // The cursor first: a record replicated while the start-up work below runs (a peer's catch-up lands
        // at once) is then still ahead of it and scanned, not skipped. Presenting an ID twice is harmless.
        cursor = (try? store.lastSequence()) ?? 0
        presentAll()
        settleAllActionRequests()
        while true {
            var work: [@Sendable () -> Void] = []
            var scan = false
            var retry = false
            waiting.dropExpired(nowMillis: clock())
            // Asked only while something waits: with nothing pending the worker sleeps without a timer and
            // touches no bus.
            let retryAt = waiting.isEmpty ? nil
                : waiting.nextRetryMillis(lastAttemptMillis: lastRetryMillis, sessionBus: presenter.notifier.sessionBusReachable())
            let wakeAt = [retryAt, balanceRecheckAtMillis].compactMap { $0 }.min()
            let publishedWaiting = !waiting.isEmpty
            let keepGoing = jobs.locked { () -> Bool in
                retriesOnActivity = publishedWaiting
                if queue.isEmpty && !changedPending && running {
                    if let wakeAt {
                        jobs.wait(untilMillis: wakeAt)
                        retry = queue.isEmpty && !changedPending && retryAt.map { clock() >= $0 } == true
                    } else {
                        jobs.wait()
                    }
                }
                work = queue
                queue.removeAll()
                scan = changedPending
                changedPending = false
                return running
            }
            guard keepGoing else { return }
            for job in work { job() }
            if scan { scanChanges() }
            if let recheck = balanceRecheckAtMillis, clock() >= recheck { checkBalance() }
            if scan && waiting.looksAgainOnActivity(nowMillis: clock(), lastLookMillis: lastRetryMillis) { retry = true }
            if retry {
                lastRetryMillis = clock()
                // Each is planned again first: one that expired or was dismissed meanwhile stops waiting
                // without asking the bus.
                for id in waiting.ids { _ = present(id) }
            }
        }
    }

    /// Takes back a post made for an action's request that the app deleted while it was being made.
    private func withdraw(_ identifier: String, suite: String) {
        let outcome = dismiss(id: identifier).postedStatus
        log.write("event=action-notification-withdrawn suite=\(quoted(suite)) id=\(quoted(identifier)) reason=\"the request was removed while it was being shown\" outcome=\(quoted(outcome))")
    }

    /// Presents every ID that has a record: at start-up, the state in the store may have changed while the
    /// daemon was down (a dismiss from a peer, a server restart).
    private func presentAll() {
        var ids = Set<String>()
        for suite in [NotificationSuites.sharedRecords, NotificationSuites.localRecords] {
            for entry in (try? store.liveEntries(suite: suite)) ?? [] { ids.insert(entry.key) }
        }
        for id in ids.sorted() { _ = present(id) }
        checkBalance()
    }

    /// "Time's up" and the countdown follow the balance; the check says when to look again unprompted.
    private func checkBalance() {
        balanceRecheckAtMillis = timesUp.check(service: self, store: store, nowMillis: clock())
    }

    /// Requests written while no daemon ran (a callback at boot, before `serve`) are still `pending`: nothing
    /// else would ever show them. Looked for once, at start-up, across all suites; while the daemon runs, `fire`
    /// hands its requests over itself (`notify-actions`), and since that runs on this thread after this look, a
    /// request is found by one or the other, never lost between them and never posted by both.
    private func settleAllActionRequests() {
        do {
            for entry in ActionNotificationRequest.inFiringOrder(try store.liveEntries(keyPrefix: AppGroupState.notificationPrefix)) { _ = settle(entry) }
        } catch {
            log.write("event=action-notifications-unreadable error=\(quoted("\(error)"))")
        }
    }

    /// Acts on one request as `ActionNotificationRequest.step` says and records the outcome in its `status`;
    /// returns the status it is left with, or `nil` for another device's request or one that is not a request.
    /// The status is written only over the very request acted on: if `fire` rewrote it meanwhile (a new request
    /// under the same identifier, or a removal), the new one is acted on in turn instead of being overwritten.
    private func settle(_ found: Entry) -> String? {
        var entry = found
        // A post this look made for a request that another device's then replaced: what became of it is still
        // this device's answer (its `fire` would otherwise read the other device's status).
        var postedBeforeReplaced: String?
        for _ in 0..<4 {
            guard case .dictionary(let request)? = entry.value, let identifier = AppGroupState.notificationIdentifier(ofKey: entry.key) else { return nil }
            let status: String
            var putOnScreen = false
            switch ActionNotificationRequest.step(identifier: identifier, request: request, writtenBy: entry.version.origin,
                                                  device: store.device, nowMillis: clock()) {
            case .othersRequest:
                return postedBeforeReplaced
            case .leave:
                let status = ActionNotificationRequest.status(of: request)
                if status == ActionNotificationRequest.waiting { noteWaiting(identifier, suite: entry.suite) }
                return status
            case .settle(let settled):
                status = settled
            case .post(let post):
                let answer = self.post(post)
                status = answer.postedStatus
                // Shown, or to be shown once a server appears; not one suppressed, which left an earlier post
                // of the ID on screen, nor one that failed.
                if case .done(_, let result, _, _) = answer { putOnScreen = result == .shown || result == .waiting }
            case .dismiss:
                // A removal an app wrote under one of GroupSync's own IDs is refused, as `notify dismiss` refuses it.
                do throws(NotificationError) {
                    try NotificationRequest.validate(id: identifier)
                    status = dismiss(id: identifier).dismissedStatus
                } catch {
                    status = "failed: \(error)"
                }
            }
            var updated = request
            updated["status"] = .string(status)
            do {
                let (written, current) = try store.update(suite: entry.suite) { entries throws(StoreError) -> (changes: [String: SuiteChange], result: (Bool, Entry?)) in
                    let now = entries.first { $0.key == entry.key }
                    guard now?.value == entry.value else { return ([:], (false, now)) }
                    return ([entry.key: .set(.dictionary(updated))], (true, now))
                }
                if written {
                    log.write("event=action-notification suite=\(quoted(entry.suite)) id=\(quoted(identifier)) status=\(quoted(status))")
                    if status == ActionNotificationRequest.waiting { noteWaiting(identifier, suite: entry.suite) }
                    return status
                }
                guard let current else {
                    // The app deleted the request meanwhile. A pending removal (`fire`'s, in its own transaction)
                    // deletes a request it finds still pending and tells the app it was removed before it was
                    // shown; if this post reached the screen in that moment, nothing would be left to take it
                    // down by. Withdrawn, it is on screen for the moment of a round trip, as if never shown.
                    if putOnScreen { withdraw(identifier, suite: entry.suite) }
                    return nil
                }
                if putOnScreen { postedBeforeReplaced = status }
                entry = current
            } catch {
                log.write("event=action-notification-unsaved suite=\(quoted(entry.suite)) id=\(quoted(identifier)) error=\(quoted("\(error)"))")
                return ActionNotificationRequest.status(of: request)
            }
        }
        return nil
    }

    /// An action request of `identifier` in `suite` waits for a server, to show the identifier's current post.
    private func noteWaiting(_ identifier: String, suite: String) {
        guard let waitingPost = (try? currentRecord(identifier))??.stamp else { return }
        var suites = waitingActionRequests[identifier].flatMap { $0.post == waitingPost ? $0.suites : nil } ?? []
        suites.insert(suite)
        waitingActionRequests[identifier] = (waitingPost, suites)
    }

    /// The post `shown` of `id` was just shown: a shield post that waited as that very post is stamped, and
    /// this device's action requests that waited for it say so. Whatever waited as another post of the ID
    /// (replaced or dismissed meanwhile) will never be shown: it stops waiting, unmarked.
    private func markWaitingShown(_ id: String, shown: NotificationStamp) {
        if let stamp = waitingShieldStamps.removeValue(forKey: id), stamp.post == shown {
            do { try stampShield(ShieldNotificationConfig.lastSentAt(nowMillis: clock()), suite: stamp.suite, key: stamp.key) } catch {
                log.write("event=shield-stamp-unsaved suite=\(quoted(stamp.suite)) error=\(quoted("\(error)"))")
            }
        }
        guard let (waitingPost, suites) = waitingActionRequests.removeValue(forKey: id), waitingPost == shown else { return }
        let key = AppGroupState.notificationKey(id)
        for suite in suites.sorted() {
            do {
                let marked = try store.update(suite: suite) { entries throws(StoreError) -> (changes: [String: SuiteChange], result: Bool) in
                    guard case .dictionary(var request)? = entries.first(where: { $0.key == key })?.value,
                          ActionNotificationRequest.status(of: request) == ActionNotificationRequest.waiting else { return ([:], false) }
                    request["status"] = .string(ActionNotificationRequest.shown)
                    return ([key: .set(.dictionary(request))], true)
                }
                if marked { log.write("event=action-notification suite=\(quoted(suite)) id=\(quoted(id)) status=\"shown\"") }
            } catch {
                log.write("event=action-notification-unsaved suite=\(quoted(suite)) id=\(quoted(id)) error=\(quoted("\(error)"))")
            }
        }
    }

    private func scanChanges() {
        guard let head = try? store.lastSequence(), head > cursor else { return }
        let suites = [NotificationSuites.sharedRecords, NotificationSuites.localRecords, BalanceSuite.name]
        guard let keys = try? store.changedKeys(after: cursor, through: head, inSuites: suites) else { return }
        cursor = head
        let ids = Set(keys.filter { $0.suite != BalanceSuite.name }.map(\.key))
        for id in ids.sorted() {
            // Skipped only when none of the ID's records changed: a dismiss of an older post still on screen
            // changes that record, not the current one, and must still be carried out.
            if let failed = failedRecords[id], (try? records(id)) == failed { continue }
            _ = present(id)
        }
        if keys.contains(where: { $0.suite == BalanceSuite.name }) { checkBalance() }
    }

    /// The clock of the device that posted `record` minus this one's: 0 for this device's post, or when no session
    /// has measured it yet.
    private func originClockOffset(of record: NotificationRecord?) -> Int64 {
        record.flatMap { $0.stamp.origin == store.device ? nil : clockOffset($0.stamp.origin) } ?? 0
    }

    /// Shows, replaces, closes or leaves the notification of `id` as its record says, and stores what is on screen.
    private func present(_ id: String) -> NotificationPresenter.Outcome? {
        let record: NotificationRecord?
        let display: NotificationDisplay?
        do {
            record = try currentRecord(id)
            display = try store.entry(suite: NotificationSuites.display, key: id)?.value.map { try NotificationDisplay(id: id, value: $0) }
        } catch {
            log.write("event=notification-unreadable id=\(quoted(id)) error=\(quoted("\(error)"))")
            return nil
        }
        let origin = originClockOffset(of: record)
        let outcome = presenter.present(id: id, record: record, display: display, nowMillis: clock(), originClockOffsetMillis: origin)
        if let newDisplay = outcome.display {
            do { try store.set(newDisplay.value, suite: NotificationSuites.display, key: id) } catch {
                log.write("event=notification-state-unsaved id=\(quoted(id)) error=\(quoted("\(error)"))")
            }
        }
        switch outcome.kind {
        case .serverUnavailable(let reason):
            // Every present that asked the bus is an attempt: the next one on a timer is a whole interval later.
            lastRetryMillis = clock()
            waiting.noServer(for: id, record: record, display: display, device: store.device, nowMillis: lastRetryMillis,
                             originClockOffsetMillis: origin)
            if !saidUnavailable {
                saidUnavailable = true
                log.write("event=notification-server-unavailable reason=\(quoted(reason)) action=\"keep state, show when a server appears\"")
            }
        case .done(let plan):
            failedRecords[id] = nil
            // Only a show or a close reached a server; a plan with nothing to do (a post expired while it
            // waited, forgotten) asked no one, and must not tell the operator a server is back.
            let reachedServer = switch plan.action {
            case .show, .close: true
            case .nothing, .forget: false
            }
            if saidUnavailable && reachedServer {
                saidUnavailable = false
                log.write("event=notification-server-available")
            }
            if case .show = plan.action, let record { markWaitingShown(id, shown: record.stamp) }
            waiting.presented(id)
            if case .nothing = plan.action {} else { log.write("event=notification id=\(quoted(id)) outcome=\(quoted(outcome.description))") }
        case .failed:
            waiting.presented(id)
            failedRecords[id] = try? records(id)
            log.write("event=notification-failed id=\(quoted(id)) \(quoted(outcome.description))")
        }
        return outcome
    }

    private func currentRecord(_ id: String) throws -> NotificationRecord? {
        NotificationRecord.current(try records(id))
    }

    /// The ID's records in both scopes (shared, then local), those that exist.
    private func records(_ id: String) throws -> [NotificationRecord] {
        var records: [NotificationRecord] = []
        for suite in [NotificationSuites.sharedRecords, NotificationSuites.localRecords] {
            if let value = try store.entry(suite: suite, key: id)?.value {
                records.append(try NotificationRecord(id: id, value: value, suite: suite))
            }
        }
        return records
    }

    /// `dismissing`: the answer to a dismiss, which with no server has nothing to wait for.
    private func answer(for outcome: NotificationPresenter.Outcome?, id: String, dismissing: Bool = false) -> NotificationAnswer {
        switch outcome?.kind {
        case .done(let plan)?:
            let result: NotificationAnswer.Result
            switch plan.action {
            case .show: result = .shown
            case .close: result = .closed
            case .nothing, .forget: result = .unchanged
            }
            return .done(id: id, result: result, reason: "\(plan.reason)")
        case .serverUnavailable(let reason)? where dismissing:
            // The dismissal is stored (and replicated for scope all); nothing waits for a server to close it,
            // since whatever was shown here went away with that server (NotificationServerWait).
            return .done(id: id, result: .unchanged, reason: "dismissed; no notification server (\(reason)), so nothing was closed here")
        case .serverUnavailable(let reason)?:
            return .done(id: id, result: .waiting, reason: "no notification server (\(reason)); it will be shown when one appears")
        case .failed(_, let reason)?:
            return .done(id: id, result: .failed, reason: reason)
        case nil:
            return .done(id: id, result: .failed, reason: "the notification state could not be read")
        }
    }

    private func quoted(_ text: String) -> String { JSONWriter.string(for: .string(text)) }
}

/// A one-shot answer handed from the worker thread back to a waiting control-socket thread.
private final class Answer: @unchecked Sendable {
    private let condition = Condition()
    private var value: String?

    func set(_ answer: String) {
        condition.locked { value = answer }
        condition.broadcast()
    }

    func wait() -> String {
        condition.locked {
            while value == nil { condition.wait() }
            return value!
        }
    }
}
