import Glibc
import GroupSyncCore
import GroupSyncNotify
import GroupSyncStore
import GroupSyncTransport
import Synchronization

/// `groupsync serve`: accepts paired peers, dials them, and keeps every session fed with local changes.
///
/// Threads: one accepts connections; one per accepted connection handshakes and runs it, and one more per
/// connection writes what its session queues; one dialer per paired device; one waits on the home's change
/// signal (inotify) and forwards local commits to every session; one serves the control socket, handing
/// clients with slow requests to short-lived workers; one posts notifications (`NotificationService`); one
/// waits for SIGTERM/SIGINT/SIGHUP. Nothing polls: every thread blocks until there is something to do, and an
/// idle daemon wakes only for keep-alives.
public final class Daemon: @unchecked Sendable {
    public struct Configuration: Sendable {
        public var home: Home
        public var listen: ListenAddress
        public var handshakeTimeoutMillis: Int64 = 10_000
        /// How far ahead of our clock a peer's timestamps may be before its entries (and, past the same
        /// bound of measured offset, its sessions) are refused.
        public var maxClockDriftMillis: Int64 = HybridClock.defaultMaxForwardDriftMillis
        /// The process environment. The balance's time zone is looked up in `TZDIR` when set, and the daemon must
        /// read it exactly as the CLI does: otherwise a zone the CLI accepted fails in the agent and the
        /// time's-up check, and the balance is never rebalanced on this device.
        public var environment: [String: String] = [:]
        /// Whatever opened the store first for this daemon (`serve` checks the home) made it: logged as the
        /// daemon's own making would be.
        public var storeMadeBeforeStart = false
        public init(home: Home, listen: ListenAddress) {
            self.home = home
            self.listen = listen
        }
    }

    let configuration: Configuration
    let certificate: DeviceCertificate
    /// The name the daemon started with: kept if the name file is later removed or damaged.
    private let startName: String
    /// This device's name, read again for each new session and each `status`, so that `init --name` while the
    /// daemon runs is shown from then on (peers see it from their next connection).
    var deviceName: String {
        configuration.home.deviceName().flatMap { DeviceName.isValid($0) ? $0 : nil } ?? startName
    }
    let log: DaemonLog
    let clock: @Sendable () -> Int64 = WallClock.nowMillis

    private let state = Condition()
    private nonisolated(unsafe) var running = true
    private nonisolated(unsafe) var paired: [DeviceID: PairedDevice] = [:]
    private nonisolated(unsafe) var connections: [DeviceID: PeerConnection] = [:]
    private nonisolated(unsafe) var dialers: Set<DeviceID> = []
    /// Threads that hold TLS connections and store connections (handshakes, sessions, dialers): `shutdown`
    /// waits for them to end, so that nothing of theirs is still being freed when `serve` returns and the
    /// process exits.
    private nonisolated(unsafe) var connectionThreads = 0
    /// What we last knew of each peer's session, kept after it disconnects for `status`.
    private nonisolated(unsafe) var lastKnown: [DeviceID: SessionStatus] = [:]
    /// Why the last dial or session with each peer failed, for `status`; removed when one ends without failing.
    private nonisolated(unsafe) var lastErrors: [DeviceID: String] = [:]
    /// When each peer said it had removed this device (its goodbye), until a session with it is established
    /// again: its later refusals are that removal, not a pairing never made, as their own message guesses.
    private nonisolated(unsafe) var removedBy: [DeviceID: Int64] = [:]
    /// The goodbye a removed peer hears, and by which it knows it was removed.
    static let removedReason = "this device is no longer paired with you"
    private let allowed = AllowedPeers()
    private let admission = Admission()
    let throttled: LogThrottle

    private var listener: TLSListener?
    private var watcher: ChangeWatcher?
    private var control: ControlServer?
    private let store: Store
    /// Writes from control-socket clients, committed together.
    let committer: GroupCommitter
    /// Reads for control-socket clients, on their own SQLite connection.
    let reader: Store
    let readLock = Mutex(())
    let notifications: NotificationService
    /// Posted after every commit this daemon makes, so watchers in every process see it.
    private let changeSignal: ChangeSignal

    /// The first of `boundAddresses`.
    public private(set) var boundAddress: ListenAddress
    /// Every address the listener holds, numeric, once `run` has bound them.
    public private(set) var boundAddresses: [ListenAddress]

    public init(configuration: Configuration, certificate: DeviceCertificate, deviceName: String) throws(DaemonError) {
        self.configuration = configuration
        self.certificate = certificate
        self.startName = deviceName
        self.log = DaemonLog(clock: WallClock.nowMillis)
        LockWait.notice = { [log] in log.write("event=store-lock-waiting detail=\"\($0)\"") }
        let throttled = LogThrottle(log: log, clock: monotonicMillis)
        self.throttled = throttled
        self.boundAddress = configuration.listen
        self.boundAddresses = [configuration.listen]
        DescriptorLimit.raise()
        do {
            store = try Store(path: configuration.home.storePath, device: certificate.deviceID)
            if store.madeTheFile || configuration.storeMadeBeforeStart {
                log.write("event=store-created path=\"\(configuration.home.storePath)\" note=\"there was none: a new, empty store; paired devices refill it\"")
            }
            reader = try Store(path: configuration.home.storePath, device: certificate.deviceID)
            let writer = try Store(path: configuration.home.storePath, device: certificate.deviceID)
            let signal = ChangeSignal(home: configuration.home) { problem in
                throttled.write(key: "change-signal", "event=change-signal-failed error=\"\(problem)\" action=\"peers and watchers hear of the commit with the next one that signals\"")
            }
            signal.openNow()
            changeSignal = signal
            writer.didCommit = { signal.post() }
            committer = GroupCommitter(store: writer)
            let notificationStore = try Store(path: configuration.home.storePath, device: certificate.deviceID)
            notificationStore.didCommit = { signal.post() }
            notifications = NotificationService(store: notificationStore, notifier: LibnotifyNotifier(), log: log, clock: WallClock.nowMillis,
                                                environment: configuration.environment)
        } catch {
            throw .store(error.description)
        }
    }

    /// Runs until SIGTERM, SIGINT or SIGHUP; returns the exit code.
    public func run() throws(DaemonError) -> Int32 {
        let home = configuration.home
        try DaemonLock.acquire(home: home)
        // Block the stop signals in every thread; one thread takes them with sigwait.
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGTERM)
        sigaddset(&stopSignals, SIGINT)
        // A hang-up (the terminal of a foreground `serve` closed, an ssh session dropped) stops the daemon as
        // SIGTERM does, with goodbyes to peers, rather than killing it on the spot as its default action does.
        // Unless hang-ups are ignored (`nohup groupsync serve &`): that asks to outlive them, and a blocked
        // signal is queued for `sigwait` even while ignored (found by review).
        if !Self.hangUpsAreIgnored() { sigaddset(&stopSignals, SIGHUP) }
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
        Transport.ignoreSIGPIPE()

        do { watcher = try ChangeWatcher(home: home) } catch { throw .io(error.description) }
        try reloadPeers()
        // What the last run knew of each peer, so that `status` does not forget, until a peer is reached
        // again, when it last synced and what waits for it. Unreadable, it is only not shown.
        let remembered = (try? store.savedSyncStatuses()) ?? [:]
        state.locked { lastKnown = remembered.filter { paired[$0.key] != nil } }
        let context: TLSContext
        do {
            context = try TLSContext(certificate: certificate) { [allowed] id in allowed.contains(id) }
            listener = try TLSListener.bind(host: configuration.listen.host, port: configuration.listen.port, context: context)
        } catch TransportError.addressResolutionFailed(let host, let detail) {
            throw .badListenAddress("cannot listen on \(configuration.listen): '\(host)' is not an address of this machine (\(detail)); give --listen an IP address or a host name of this machine")
        } catch {
            throw .io("cannot listen on \(configuration.listen): \(error)")
        }
        // What was bound, numerically, rather than the name given: a name resolves to several addresses
        // (localhost: ::1 and 127.0.0.1), each listened on if it can be, and status must not claim one that
        // could not (found by a networking review: peers paired with an address not bound were refused while
        // status said "listening on localhost").
        boundAddresses = listener!.addresses.map {
            ListenAddress(parsing: $0, defaultHost: configuration.listen.host) ?? ListenAddress(host: configuration.listen.host, port: listener!.port)
        }
        boundAddress = boundAddresses[0]
        for notBound in listener!.addressesNotBound {
            log.write("event=listen-address-not-bound host=\(configuration.listen.host) address=\"\(notBound)\" listen=\(boundAddresses.map(\.description).joined(separator: ","))")
        }
        do { control = try ControlServer(home: home, daemon: self) } catch {
            if case .socketPathTooLong = error { throw .badHome(error.description) }
            throw .io(error.description)
        }
        log.write("event=started device=\(certificate.deviceID) name=\"\(deviceName)\" listen=\(boundAddresses.map(\.description).joined(separator: ",")) peers=\(state.locked { paired.count })")

        // Before any thread starts: the watcher reads it to dial devices paired from now on (ThreadSanitizer
        // caught it written after, a race that could also leave a device paired at start-up undialed).
        self.context = context
        notifications.clockOffset = { [unowned self] peer in
            state.locked { connections[peer]?.status.clockOffsetMillis ?? lastKnown[peer]?.clockOffsetMillis }
        }
        // Without these threads there is no daemon: say so and exit rather than run half of one.
        guard spawnThread({ [self] in acceptLoop(listener!) }), spawnThread({ [self] in watchLoop() }),
              spawnThread({ [self] in control!.serve() }), notifications.start() else {
            throw .io("the system will not start the daemon's threads (a process or task limit)")
        }
        state.locked { for id in paired.keys { startDialer(id, context: context) } }

        var received: Int32 = 0
        sigwait(&stopSignals, &received)
        let status = state.locked { exitStatus }
        if status == 0 { log.write("event=stopping signal=\(received == SIGTERM ? "SIGTERM" : received == SIGHUP ? "SIGHUP" : "SIGINT")") }
        shutdown()
        log.write("event=stopped")
        return status
    }

    /// Whether this process was started with SIGHUP ignored, as `nohup` starts it.
    private static func hangUpsAreIgnored() -> Bool {
        var current = sigaction()
        guard sigaction(SIGHUP, nil, &current) == 0, let handler = current.__sigaction_handler.sa_handler else { return false }
        return unsafeBitCast(handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }

    /// What `run` returns: 0, or 3 once the daemon stopped itself because its store is no longer in the home.
    private nonisolated(unsafe) var exitStatus: Int32 = 0

    /// Stops the daemon with exit 3 (an environment failure: a supervisor such as the systemd unit starts it
    /// again), by sending itself the SIGTERM the main thread waits for.
    private func stopItself(_ why: String) {
        log.write("event=stopping reason=\"\(why)\" exit=3")
        state.locked { exitStatus = 3 }
        kill(getpid(), SIGTERM)
    }

    private nonisolated(unsafe) var context: TLSContext?
    /// How far the watch loop has looked for changes to `watchedSuites` and to selection blocks.
    private nonisolated(unsafe) var watchedCursor: Int64 = 0
    /// How long a session in doubt (kept over a new connection from the same device, or with a peer given a new
    /// address) has to answer a ping: a live one answers in milliseconds, even on a slow link.
    static let duplicateProbeMillis: Int64 = 3_000
    /// What the notification worker and the balance agent act on.
    private static let watchedSuites = [NotificationSuites.sharedRecords, NotificationSuites.localRecords, BalanceSuite.name]
    /// Which peers the balance agent last saw.
    private nonisolated(unsafe) var balanceAgentPeers: Set<DeviceID>?
    /// Whether the balance suite has been seen holding anything; once it has, it stays in use.
    private nonisolated(unsafe) var balanceSeenInUse = false

    /// Whether anyone has used the balance (its suite holds a live entry); only the watch loop asks.
    private func balanceInUse() -> Bool {
        if !balanceSeenInUse, let first = try? store.liveEntries(suite: BalanceSuite.name, after: nil, limit: 1) {
            balanceSeenInUse = !first.isEmpty
        }
        return balanceSeenInUse
    }
    /// The pairing version the peer list was last read at (`nil`: never read).
    private nonisolated(unsafe) var loadedPairingVersion: Int64?
    /// How long the accept loop waits after a failed accept; only that loop's thread touches it.
    private nonisolated(unsafe) var acceptBackoffMillis = 100

    private func shutdown() {
        let live = state.locked { () -> [PeerConnection] in
            running = false
            return Array(connections.values)
        }
        state.broadcast()
        listener?.close()
        watcher?.wake()
        control?.close()
        notifications.stop()
        for connection in live { connection.stop(reason: "the device is shutting down") }
        for connection in live { connection.waitUntilFinished(millis: 2000) }
        let deadline = monotonicMillis() + 3000
        state.locked {
            while connectionThreads > 0, monotonicMillis() < deadline { state.wait(millis: 50) }
        }
    }

    /// Starts a thread `shutdown` waits for (see `connectionThreads`). The count drops only after `body` has
    /// returned, and so after everything it made locally is freed. `stateLocked`: the caller holds `state`.
    /// False when no thread could be started (`spawnThread`); nothing then runs and nothing is counted.
    @discardableResult
    private func spawnConnectionThread(stateLocked: Bool = false, _ body: @escaping @Sendable () -> Void) -> Bool {
        if stateLocked { connectionThreads += 1 } else { state.locked { connectionThreads += 1 } }
        let started = spawnThread { [self] in
            body()
            state.locked { connectionThreads -= 1 }
            state.broadcast()
        }
        if !started {
            if stateLocked { connectionThreads -= 1 } else { state.locked { connectionThreads -= 1 } }
            throttled.write(key: "no thread", "event=thread-refused reason=\"the system will not start another thread\" action=\"drop the connection\"")
        }
        return started
    }

    // MARK: Paired devices

    /// Re-reads the paired devices if they changed (`pairingVersion`: the version just read, if the caller
    /// has it); drops connections to removed ones at once.
    private func reloadPeers(pairingVersion known: Int64? = nil) throws(DaemonError) {
        let devices: [PairedDevice]
        do {
            let version: Int64
            if let known { version = known } else { version = try store.pairingVersion() }
            guard version != loadedPairingVersion else { return }
            devices = try store.pairedDevices()
            loadedPairingVersion = version
        } catch { throw .store(error.description) }
        var removed: [PeerConnection] = []
        var moved: [PeerConnection] = []
        state.locked {
            let old = paired
            paired = Dictionary(devices.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
            for id in old.keys where paired[id] == nil {
                if let connection = connections.removeValue(forKey: id) { removed.append(connection) }
                lastKnown[id] = nil
                lastErrors[id] = nil
                removedBy[id] = nil
            }
            for (id, device) in paired where old[id].map({ $0.address != device.address }) == true {
                if let connection = connections[id] { moved.append(connection) }
            }
        }
        allowed.replace(with: Set(devices.map(\.id)))
        for connection in removed {
            log.write("event=peer-removed peer=\(connection.peer.short) action=disconnect")
            connection.stop(reason: Self.removedReason)
        }
        // A new address for a peer we are connected with (`peer add` again: it moved) puts the session in doubt:
        // it may run over the network the peer has left, and would hold the dialer off the new address until it
        // fell silent for 90 s (found by a networking review). A session that answers a ping stays; one that
        // does not ends, and the new address is dialed at once. Asked on a thread of its own: the answer may
        // take seconds, and this thread serves every change.
        for connection in moved {
            spawnConnectionThread { [self] in
                guard !connection.answersPing(withinMillis: Self.duplicateProbeMillis) else { return }
                log.write("event=peer-moved peer=\(connection.peer.short) action=\"disconnect a session that did not answer a ping\"")
                connection.stop(reason: "your address changed here and this connection did not answer a ping")
            }
        }
        // Every paired device, not only new ones: `startDialer` skips a device already dialed, and starts one
        // whose dialer could not be started before.
        if let context {
            state.locked { for id in paired.keys { startDialer(id, context: context) } }
        }
        state.broadcast()
    }

    // MARK: Connections

    private func acceptLoop(_ listener: TLSListener) {
        while state.locked({ running }) {
            let pending: PendingConnection
            do {
                pending = try listener.accept()
            } catch .listenerClosed {
                return
            } catch {
                // Out of file descriptors, say: the connection waits in the backlog and the listener stays
                // readable, so back off (up to 2 s, reset by the next success) and say so once, not ten times a second.
                throttled.write(key: "accept-failed", "event=accept-failed error=\"\(error)\" action=\"retry, backing off\"")
                usleep(UInt32(acceptBackoffMillis) * 1000)
                acceptBackoffMillis = min(acceptBackoffMillis * 2, 2000)
                continue
            }
            acceptBackoffMillis = 100
            // Until its handshake ends a connection is a stranger's: bounded in number and in time.
            let host = Admission.host(of: pending.remoteAddress)
            guard admission.admit(host: host) else {
                throttled.write(key: "busy \(host)", "event=refused remote=\(pending.remoteAddress) reason=\"too many handshakes in progress (at most \(admission.maxPendingPerHost) per host, \(admission.maxPending) in all)\" action=close")
                pending.close()
                continue
            }
            let started = spawnConnectionThread { [self] in
                let connection: TLSConnection
                do {
                    connection = try pending.handshake(timeout: .milliseconds(configuration.handshakeTimeoutMillis))
                    admission.release(host: host)
                } catch {
                    admission.release(host: host)
                    // Keyed by what went wrong, not by which device: a stranger can make up a new device ID for
                    // every connection, and one line per ID would let it fill the log (found by audit).
                    let what = if case TransportError.peerNotAllowed = error { "not paired" } else { "\(error)" }
                    throttled.write(key: "refused \(host) \(what)", "event=refused remote=\(pending.remoteAddress) reason=\"\(error)\"")
                    pending.close()
                    return
                }
                run(connection, initiator: connection.peerID)
            }
            if !started {
                admission.release(host: host)
                pending.close()
            }
        }
    }

    /// Registers a connection and runs it to its end on the calling thread. Keeps one connection per peer:
    /// when both devices dial at once, both keep the one dialed by the smaller device ID. Returns whether the
    /// peer refused this device, which the dialer backs off longer from (`ReconnectBackoff.refusedMaxMillis`).
    @discardableResult
    private func run(_ transport: TLSConnection, initiator: DeviceID) -> Bool {
        let peer = transport.peerID
        let peerStore: Store
        do {
            peerStore = try Store(path: configuration.home.storePath, device: certificate.deviceID,
                                  maxForwardDriftMillis: configuration.maxClockDriftMillis)
        } catch {
            log.write("event=store-failed peer=\(peer.short) error=\"\(error)\"")
            // Shown by `status` too: without it the peer only looked disconnected (found by review, with the
            // daemon out of descriptors).
            state.locked { if paired[peer] != nil { lastErrors[peer] = "this device's store failed: \(error)" } }
            transport.close()
            return false
        }
        let signal = changeSignal
        peerStore.didCommit = { signal.post() }
        peerStore.mergesOnlyFromPairedPeers = true
        // A damaged row is left out of what this session sends, named in the log once a minute, and
        // everything else still replicates; the row itself stays as it is (nothing is repaired behind the
        // user's back), and a later write of that key replicates as usual.
        peerStore.skipDamagedRow = { [throttled] error in
            throttled.write(key: "damaged \(error)", "event=damaged-row-skipped error=\"\(error)\" action=\"left out of replication; everything else is sent; writing the key again replaces it\"")
        }
        var sessionConfiguration = SessionConfiguration()
        sessionConfiguration.clockRefuseMillis = configuration.maxClockDriftMillis
        sessionConfiguration.clockWarnMillis = min(sessionConfiguration.clockWarnMillis, configuration.maxClockDriftMillis)
        let connection = PeerConnection(peer: peer, initiator: initiator, transport: transport, store: peerStore,
                                        deviceName: deviceName, configuration: sessionConfiguration, log: log, clock: SessionTime.now)
        var replaced: PeerConnection?
        var kept: PeerConnection?
        var accepted = state.locked { () -> Bool in
            guard running, paired[peer] != nil else { return false }
            if let existing = connections[peer], existing.isAlive {
                guard DuplicateConnection.replaces(newInitiator: initiator, existingInitiator: existing.initiator) else {
                    kept = existing
                    return false
                }
                replaced = existing
            }
            connections[peer] = connection
            return true
        }
        // The rule keeps the session we hold. But the device dialing in again may have restarted, or moved to
        // another network, leaving that session dead without a word; kept, it would refuse every redial until
        // it fell silent for 90 s (found by a networking review). So the kept session must answer a ping;
        // one that does not is replaced. Two devices dialing each other at once still keep the same one.
        if !accepted, let kept, !kept.answersPing(withinMillis: Self.duplicateProbeMillis) {
            log.write("event=duplicate-connection peer=\(peer.short) action=replace-silent-old")
            kept.stop(reason: "the device dialed again and this connection did not answer a ping")
            kept.waitUntilFinished(millis: 5000)
            accepted = state.locked { () -> Bool in
                guard running, paired[peer] != nil else { return false }
                if let current = connections[peer], current !== kept, current.isAlive { return false }
                connections[peer] = connection
                return true
            }
        }
        guard accepted else {
            log.write("event=duplicate-connection peer=\(peer.short) action=close-new")
            transport.close()
            return false
        }
        if let replaced {
            log.write("event=duplicate-connection peer=\(peer.short) action=replace-old")
            replaced.stop(reason: "replaced by a newer connection")
            replaced.waitUntilFinished(millis: 5000)
        }
        // Let go of the old connection now: held in these variables, it kept its store open (a SQLite connection
        // and three files) for as long as the new one runs (found by a soak).
        replaced = nil
        kept = nil
        log.write("event=connected peer=\(peer.short) remote=\(transport.remoteAddress) initiator=\(initiator == certificate.deviceID ? "us" : "peer")")
        // A peer that comes or goes changes what the balance agent would spread, and to whom, without a write to
        // wake the watch loop: nudged, it runs the agent (found by review: a device that reconnected held what
        // it held before until the next balance write).
        connection.established = { [self] name in
            adoptName(name, of: peer, store: peerStore)
            watcher?.nudge()
        }
        connection.run()
        watcher?.nudge()
        let ended = state.locked { () -> SessionStatus? in
            if connections[peer] === connection { connections[peer] = nil }
            // A peer removed meanwhile keeps no status: paired again, it starts afresh.
            guard paired[peer] != nil else { return nil }
            lastErrors[peer] = connection.status.failure
            if case .peerSaidGoodbye(_, let text)? = connection.status.closeReason, text == Self.removedReason {
                removedBy[peer] = WallClock.nowMillis()
            } else if connection.wasEstablished {
                removedBy[peer] = nil
            } else if let removedAt = removedBy[peer], connection.wasRefusedByPeer {
                // Found by review: "it has probably not paired this device yet", for a peer that had removed it.
                lastErrors[peer] = "the peer removed this device at \(ISO8601.format(secondsSince1970: Double(removedAt) / 1000)) and refuses it since; "
                    + "to sync again, pair this device on the peer once more ('groupsync peer add \(certificate.deviceID)' there)"
            }
            let known = connection.status.carryingOver(from: lastKnown[peer])
            lastKnown[peer] = known
            return known
        }
        state.broadcast()
        // Kept in the store too, for `status` after a restart or with no daemon (`Store.saveSyncStatus`, which
        // also skips a peer removed since). Not kept is no harm to replication: `status` then shows less.
        if let ended {
            do { try peerStore.saveSyncStatus(ended) } catch { log.write("event=status-not-saved peer=\(peer.short) error=\"\(error)\"") }
        }
        log.write("event=disconnected peer=\(peer.short)")
        return connection.wasRefusedByPeer
    }

    /// A device paired without `--name` shows the start of its ID until it tells its own name in a hello
    /// (`peer add --help`); from then on, `status` and `peer list` show the name it tells, a new one too
    /// (`Store.adoptName`). A name the user gave stays.
    private func adoptName(_ name: String, of peer: DeviceID, store: Store) {
        guard DeviceName.isValid(name), name != peer.short, state.locked({ paired[peer] != nil }) else { return }
        do {
            if try store.adoptName(name, for: peer) {
                log.write("event=peer-named peer=\(peer.short) name=\(JSONWriter.string(for: .string(name)))")
            }
        } catch {
            log.write("event=peer-name-not-saved peer=\(peer.short) error=\"\(error)\"")
        }
    }

    /// Dials one paired device whenever no connection with it is up, backing off after failures. Called with
    /// `state` locked.
    private func startDialer(_ peer: DeviceID, context: TLSContext) {
        guard !dialers.contains(peer) else { return }
        // Not started (no thread to be had): the dialer is tried again when the peer list is next read.
        dialers.insert(peer)
        let dialing = spawnConnectionThread(stateLocked: true) { [self] in
            var backoff = ReconnectBackoff()
            var lastError = ""
            while true {
                let target = state.locked { () -> PairedDevice? in
                    guard running, let device = paired[peer] else { dialers.remove(peer); return nil }
                    return device
                }
                guard let target else { return }
                // While a connection with the peer is up (whoever dialed), sleep until it ends; the check and
                // the wait share the lock, so the wake-up from a closing connection cannot be missed.
                let hadConnection = state.locked { () -> Bool in
                    guard connections[peer] != nil else { return false }
                    while running, paired[peer] != nil, connections[peer] != nil { state.wait() }
                    return true
                }
                if hadConnection { continue }
                guard let address = ListenAddress(parsing: target.address, defaultHost: "127.0.0.1") else {
                    log.write("event=dial-skipped peer=\(peer.short) reason=\"address '\(target.address)' is not HOST:PORT\"")
                    state.locked { if running { state.wait() } }
                    continue
                }
                let started = monotonicMillis()
                do {
                    let connection = try TLSConnection.connect(host: address.host, port: address.port, context: context,
                                                               expectedPeer: peer, timeout: .seconds(5))
                    lastError = ""
                    let refused = run(connection, initiator: certificate.deviceID)
                    backoff.sessionEnded(lastedMillis: monotonicMillis() - started)
                    backoff.peerRefused = refused
                } catch {
                    backoff.peerRefused = if case .refusedByPeer? = error as? TransportError { true } else { false }
                    let text = "\(error)"
                    state.locked { lastErrors[peer] = "cannot connect to \(address): \(text)" }
                    if text != lastError {
                        log.write("event=dial-failed peer=\(peer.short) address=\(address) error=\"\(text)\" retry=backoff")
                        lastError = text
                    }
                }
                let delay = backoff.nextDelay(unit: Double.random(in: 0..<1))
                let until = monotonicMillis() + delay
                // A new address (`peer add` again) ends the wait: it is dialed at once, not after the backoff.
                state.locked {
                    while running, paired[peer]?.address == target.address, connections[peer]?.isAlive != true, monotonicMillis() < until {
                        state.wait(millis: until - monotonicMillis())
                    }
                }
            }
        }
        if !dialing { dialers.remove(peer) }
    }

    // MARK: Local changes

    private func watchLoop() {
        guard let watcher else { return }
        // When the balance agent must run again unprompted (an own request to peers expiring); nil: no timer.
        var agentRunAt: Int64?
        func runBalanceAgent(_ live: [PeerConnection]) {
            agentRunAt = BalanceAgent.rebalance(store: store, signal: changeSignal, connectedPeers: live, log: log, nowMillis: clock(),
                                              environment: configuration.environment)
        }
        // At start, before any change: if this device's own request to peers is still open (its command was
        // killed while the daemon was down), the agent runs now, withdrawing it or setting a timer for its
        // expiry, rather than waiting for the next balance change. Only then: run on every start, the agent
        // would register this device in the balance and spread rights, writes a daemon that merely starts must
        // not make (a device that never used the balance; two stores seeded alike). And the block lists are
        // brought in line with their keys at the first quiet moment (this device may have stopped after it
        // wrote part of one).
        let ownRequestOpen = try? store.updateBalance(nowMillis: clock(), environment: configuration.environment) { $0.ownRequestExpiryMillis != nil }
        if ownRequestOpen == true { runBalanceAgent(state.locked { Array(connections.values) }) }
        var blockLists = BlockListSchedule()
        if let blocks = try? store.liveEntries(keyPrefix: SelectionBlocks.keyPrefix) {
            blockLists.changed(Set(blocks.map(\.suite)), nowMillis: monotonicMillis())
        }
        while state.locked({ running }) {
            // Each timer runs only while it has something to do: an own request to expire, block lists to derive.
            let agentWait = agentRunAt.map { max(1, $0 - clock()) }
            let blocksWait = blockLists.dueAt.map { max(1, $0 - monotonicMillis()) }
            let timeout = [agentWait, blocksWait].compactMap { $0 }.min().map { Int32(clamping: $0) } ?? -1
            let event = watcher.wait(timeoutMillis: timeout)
            let dueSuites = blockLists.takeDue(nowMillis: monotonicMillis())
            if !dueSuites.isEmpty { BlockListReconciler.reconcile(suites: dueSuites, store: store, signal: changeSignal, log: log) }
            switch event {
            case .woken, .outputClosed: return  // no output is watched here
            case .timedOut:
                if let due = agentRunAt, clock() >= due { runBalanceAgent(state.locked { Array(connections.values) }) }
            case .changed:
                // A store moved aside, replaced or removed under the daemon: the file it holds open is no longer
                // where every other process writes, so what they write would never be sent (found by review).
                // One `stat` per wake-up.
                guard store.isStillAtItsPath else {
                    return stopItself("the store \(store.path) was moved, replaced or removed while the daemon ran; start it again to serve the store now in the home")
                }
                // Every commit on the machine comes through here, so it reads as little as it can: one read for
                // the head and the pairing version, one for the keys the notifications and the balance watch.
                let heads = try? store.headAndPairingVersion()
                do { try reloadPeers(pairingVersion: heads?.pairingVersion) } catch { log.write("event=peers-unreadable error=\"\(error)\"") }
                let live = state.locked { Array(connections.values) }
                for connection in live { connection.localChangesAvailable(head: heads?.lastSequence) }
                // A store that cannot say what changed (its head or the keys) counts as a change: a look too many
                // is harmless. The cursor moves only past a head that was read.
                let keys = heads.flatMap { try? store.changedKeys(after: watchedCursor, through: $0.lastSequence, inSuites: Self.watchedSuites) }
                // Block keys, and the lists derived from them (a list a device wrote while catching up is partial).
                let blocks = heads.flatMap {
                    try? store.changedKeys(after: watchedCursor, through: $0.lastSequence,
                                           withKeyPrefixes: [SelectionBlocks.keyPrefix, AppGroupState.blockedSelectionIDs, AppGroupState.lastBlockUpdate])
                } ?? []
                if let heads { watchedCursor = heads.lastSequence }
                blockLists.changed(Set(blocks.map(\.suite)), nowMillis: monotonicMillis())
                notifications.changed(relevant: keys.map { !$0.isEmpty } ?? true)
                // The balance agent runs when the balance changed or the set of connected peers did, not on
                // every write: a catch-up of thousands of entries must not pay for a rebalance per batch. And a
                // peer coming or going is no reason while nobody has used the balance: the agent would register
                // this device in it, a write a device that merely connects must not make (the benchmark's stores,
                // seeded alike, caught it once a connection nudged the agent).
                let connected = Set(live.filter { $0.status.isEstablished }.map(\.peer))
                let balanceTouched = keys.map { $0.contains { $0.suite == BalanceSuite.name } } ?? true
                if balanceTouched || (connected != balanceAgentPeers && balanceInUse()) {
                    balanceAgentPeers = connected
                    runBalanceAgent(live)
                }
            }
        }
    }

    // MARK: Status

    func statusReport() -> StatusReport {
        // Read before taking the state lock: a session that ended stopped counting what it owes its peer, and
        // what was written since is pending too.
        let head = readLock.withLock { _ in try? reader.lastSequence() }
        let name = deviceName
        return state.locked {
            let peers = paired.values.sorted { ($0.name, $0.id) < ($1.name, $1.id) }.map { device -> StatusReport.Peer in
                let connection = connections[device.id]
                let live = connection.map(\.status)
                let known = live?.carryingOver(from: lastKnown[device.id]) ?? lastKnown[device.id]
                // A live session recounts as changes come: its count stands. An ended one's, or the last one's
                // while a new session has not counted yet, is counted on.
                let pending = if let counted = live?.countedPending { counted } else { head.map { SessionStatus.pending(known, head: $0) } }
                return StatusReport.Peer(id: device.id, name: device.name, address: device.address,
                                         connected: live?.isEstablished ?? false,
                                         lastSyncMillis: known?.lastSyncMillis, clockOffsetMillis: known?.clockOffsetMillis,
                                         pendingChanges: pending,
                                         lastError: live?.isEstablished == true ? nil : lastErrors[device.id],
                                         remoteAddress: live?.isEstablished == true ? connection?.transport.remoteAddress : nil)
            }
            return StatusReport(device: certificate.deviceID, name: name, listen: boundAddress.description,
                                listenAddresses: boundAddresses.map(\.description), running: true, peers: peers)
        }
    }
}

public enum DaemonError: Error, CustomStringConvertible {
    case alreadyRunning(String)
    case store(String)
    case io(String)
    /// The address given to listen on names no host: the command line's fault, not the machine's.
    case badListenAddress(String)
    /// The control socket cannot be given an address (its path too long, and its folder unopenable): another
    /// `--home` is needed, and restarting cannot help.
    case badHome(String)

    public var description: String {
        switch self {
        case .alreadyRunning(let path): "another 'groupsync serve' is already running on the home \(path)"
        case .store(let text), .io(let text): text
        case .badListenAddress(let text), .badHome(let text): text
        }
    }
}

/// The paired device IDs the TLS layer checks at every handshake; replaced whenever the list changes.
final class AllowedPeers: Sendable {
    private let ids = Mutex<Set<DeviceID>>([])
    func contains(_ id: DeviceID) -> Bool { ids.withLock { $0.contains(id) } }
    func replace(with new: Set<DeviceID>) { ids.withLock { $0 = new } }
}
