import GroupSyncCore
import GroupSyncNotify

/// One device's notification daemon reduced to its essence, for tests: a last-writer-wins store of entries,
/// the `notify post/dismiss/shield` commands, and a presenter that shows what the store says. Replication is
/// `sync`, which carries every entry outside the local-only suites — as the real replication layer must.
final class SimulatedDevice {
    struct Key: Hashable {
        var suite: String
        var key: String
    }

    let id: DeviceID
    private(set) var entries: [Key: Entry] = [:]
    private(set) var presenter: NotificationPresenter
    private(set) var log: [String] = []
    private var clock = HybridClock()

    init(_ number: UInt8, notifier: any Notifier) {
        id = try! DeviceID(bytes: Array(repeating: number, count: 32))
        presenter = NotificationPresenter(notifier: notifier, device: id)
    }

    /// The daemon restarts: everything in memory goes, the store stays.
    func restartDaemon(notifier: any Notifier) {
        presenter = NotificationPresenter(notifier: notifier, device: id)
    }

    // MARK: Store

    func value(_ suite: String, _ key: String) -> Value? { entries[Key(suite: suite, key: key)]?.value }

    func write(_ suite: String, _ key: String, _ value: Value?, now: Int64) {
        let version = Version(hlc: clock.tick(physicalMillis: now), origin: id)
        entries[Key(suite: suite, key: key)] = Entry(suite: suite, key: key, value: value, version: version)
    }

    /// The ID's current record across both scopes.
    func record(_ notificationID: String) -> NotificationRecord? {
        NotificationRecord.current([NotificationSuites.sharedRecords, NotificationSuites.localRecords].map { suite in
            value(suite, notificationID).flatMap { try? NotificationRecord(id: notificationID, value: $0, suite: suite) }
        })
    }

    func display(_ notificationID: String) -> NotificationDisplay? {
        value(NotificationSuites.display, notificationID).flatMap { try? NotificationDisplay(id: notificationID, value: $0) }
    }

    // MARK: Commands

    @discardableResult
    func post(_ request: NotificationRequest, now: Int64) -> NotificationPosting.PostOutcome {
        let outcome = NotificationPosting.post(request, current: record(request.id), shownHere: display(request.id), device: id, nowMillis: now)
        if case .accepted(let record) = outcome {
            write(record.suite, record.id, record.value, now: now)
            present(record.id, now: now)
        }
        return outcome
    }

    @discardableResult
    func dismiss(_ notificationID: String, now: Int64) -> NotificationPosting.DismissOutcome {
        let outcome = NotificationPosting.dismiss(current: record(notificationID), device: id, nowMillis: now)
        if case .accepted(let record) = outcome { write(record.suite, record.id, record.value, now: now) }
        present(notificationID, now: now)
        return outcome
    }

    @discardableResult
    func shield(suite: String, configKey: String, app: String, now: Int64) throws(NotificationError) -> ShieldNotification.Outcome {
        let lastSentKey = ShieldNotificationConfig.lastSentAtKey(configKey: configKey)
        let outcome = try ShieldNotification.decide(config: value(suite, configKey), lastSentAt: value(suite, lastSentKey),
                                                    suite: suite, configKey: configKey, appName: app, nowMillis: now)
        // As the daemon does: stamped once shown, not while the post waits for a server.
        if case .post(let request, let lastSentAt) = outcome, case .accepted(let record) = post(request, now: now),
           display(request.id)?.stamp == record.stamp {
            write(suite, lastSentKey, lastSentAt, now: now)
        }
        return outcome
    }

    @discardableResult
    func present(_ notificationID: String, now: Int64) -> NotificationPresenter.Outcome {
        let outcome = presenter.present(id: notificationID, record: record(notificationID), display: display(notificationID), nowMillis: now)
        if let display = outcome.display { write(NotificationSuites.display, notificationID, display.value, now: now) }
        log.append(outcome.description)
        return outcome
    }

    /// What a daemon does at start and when a server appears: present every ID that has a record.
    func presentAll(now: Int64) {
        let ids = Set(entries.keys.filter { $0.suite == NotificationSuites.sharedRecords || $0.suite == NotificationSuites.localRecords }.map(\.key))
        for notificationID in ids.sorted() { present(notificationID, now: now) }
    }

    // MARK: Replication

    /// What replication may send: nothing from a local-only suite.
    var replicated: [Entry] { entries.values.filter { !LocalSuites.isLocalOnly($0.suite) } }

    /// Applies entries from a peer (last writer wins) and presents every notification ID they touched.
    func receive(_ incoming: [Entry], now: Int64) {
        var touched: Set<String> = []
        for entry in incoming where !LocalSuites.isLocalOnly(entry.suite) {
            let key = Key(suite: entry.suite, key: entry.key)
            guard LastWriterWins.wins(entry, over: entries[key]) else { continue }
            try? clock.observe(entry.version.hlc, physicalMillis: now)
            entries[key] = entry
            if entry.suite == NotificationSuites.sharedRecords { touched.insert(entry.key) }
        }
        for notificationID in touched.sorted() { present(notificationID, now: now) }
    }
}

/// Both directions of replication between every pair, as a reconnect does.
func sync(_ devices: SimulatedDevice..., now: Int64) {
    for a in devices {
        for b in devices where a !== b { b.receive(a.replicated, now: now) }
    }
}
