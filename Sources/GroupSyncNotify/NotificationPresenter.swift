import GroupSyncCore

/// Carries out `NotificationPlanner`'s plan for one ID on a `Notifier`. The caller reads the ID's current
/// record and display state from the store, calls `present`, and stores `outcome.display` when it is not nil —
/// after a local post or dismiss, after a replicated write to a record suite, at start-up, and when a server
/// appears.
public struct NotificationPresenter: Sendable {
    public struct Outcome: Hashable, Sendable, CustomStringConvertible {
        public enum Kind: Hashable, Sendable {
            /// The plan was carried out (or there was nothing to do).
            case done(NotificationPlan)
            /// No session bus or server: nothing changed; present again when one appears.
            case serverUnavailable(String)
            /// The server refused; nothing changed.
            case failed(NotificationPlan, String)
        }

        public var id: String
        public var kind: Kind
        /// The display state to store under `NotificationSuites.display` / `id`; `nil` leaves it as it is.
        public var display: NotificationDisplay?

        /// One log line.
        public var description: String {
            switch kind {
            case .done(let plan):
                switch plan.action {
                case .nothing: "notification \(id): nothing to do (\(plan.reason))"
                case .show:
                    "notification \(id): shown as \(display?.onScreen.map { "\($0.number) on \($0.serverInstance)" } ?? "?") (\(plan.reason))"
                case .close(let shown): "notification \(id): closed \(shown.number) on \(shown.serverInstance) (\(plan.reason))"
                case .forget: "notification \(id): forgot its number (\(plan.reason))"
                }
            case .serverUnavailable(let reason): "notification \(id): waiting for a notification server: \(reason)"
            case .failed(let plan, let reason): "notification \(id): \(plan.reason), but \(reason)"
            }
        }
    }

    public let notifier: any Notifier
    public let device: DeviceID

    public init(notifier: any Notifier, device: DeviceID) {
        self.notifier = notifier
        self.device = device
    }

    /// `originClockOffsetMillis`: the posting device's clock minus this one's, when known (`NotificationPlanner`).
    public func present(id: String, record: NotificationRecord?, display: NotificationDisplay?, nowMillis: Int64,
                        originClockOffsetMillis: Int64 = 0) -> Outcome {
        // Plan first: a post that is stale, dismissed and closed, or already shown needs no server, so it
        // neither asks the bus nor waits for a server that may never come (a headless box).
        let withoutServer = NotificationPlanner.planWithoutServer(record: record, display: display, device: device, nowMillis: nowMillis,
                                                                  originClockOffsetMillis: originClockOffsetMillis)
        if case .nothing = withoutServer.action { return Outcome(id: id, kind: .done(withoutServer), display: nil) }
        let server: NotificationServer
        switch notifier.availability() {
        case .unavailable(let reason): return Outcome(id: id, kind: .serverUnavailable(reason), display: nil)
        case .available(let running): server = running
        }
        let plan = NotificationPlanner.plan(record: record, display: display, serverInstance: server.instance,
                                            device: device, nowMillis: nowMillis, originClockOffsetMillis: originClockOffsetMillis)
        do throws(NotifierError) {
            switch plan.action {
            case .nothing:
                return Outcome(id: id, kind: .done(plan), display: nil)
            case .forget:
                return Outcome(id: id, kind: .done(plan), display: display?.closed())
            case .show(let content, let replacing):
                guard let record else { return Outcome(id: id, kind: .done(plan), display: nil) }
                let shown = try notifier.show(content, replacing: replacing)
                return Outcome(id: id, kind: .done(plan), display: .shown(record, as: shown, atMillis: nowMillis))
            case .close(let shown):
                // Closed, already gone or on a server that went: in every case nothing of ours is left on screen.
                _ = try notifier.close(shown)
                return Outcome(id: id, kind: .done(plan), display: display?.closed())
            }
        } catch {
            switch error {
            case .unavailable(let reason): return Outcome(id: id, kind: .serverUnavailable(reason), display: nil)
            case .failed(let reason): return Outcome(id: id, kind: .failed(plan, reason), display: nil)
            }
        }
    }
}
