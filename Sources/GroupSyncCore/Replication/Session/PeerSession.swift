/// Replication with one peer over one connection, as a deterministic state machine.
///
/// The shell owns the socket, the store and the clocks; it feeds the session events (bytes received, a local
/// commit, time passing) with the current time — a monotonic and a wall reading (`SessionTime`) — and
/// carries out the returned outputs in order. The session does no I/O of its own, so the simulator can run
/// thousands of them with a fake network and clocks.
///
/// Both sides are symmetric: each sends `hello` at once, then streams its history to the other from where
/// the other said it stands, and applies the other's history, acknowledging what is durable. See
/// `Protocol/PROTOCOL.md` for the rules; comments here say why the code follows them.
///
/// A session lives as long as its connection. After `.close` it ignores everything; reconnecting means a
/// new session (resuming from the watermarks in the store, so catching up costs what changed). Keep at most
/// one session per peer at a time: two would race on the peer's watermark.
///
/// The shell's duties: write `.send` bytes in order; then, if `hasSendHorizonToSave`, call `saveSendHorizon`
/// and carry out its outputs too; after `.applied` (and after every local commit), call
/// `localChangesAvailable` on the sessions with the other peers; sleep until `nextDeadline` (a monotonic
/// reading), then `tick`.
public struct PeerSession: Sendable {
    /// The peer's device ID, as the transport authenticated it. Never taken from a message.
    public let peer: DeviceID
    /// `peer.short`, computed once: every log line starts with it, and it costs a base32 encoding.
    let peerLabel: String
    /// Our device name, sent in `hello`.
    public let deviceName: String
    public let configuration: SessionConfiguration

    public internal(set) var phase: SessionPhase = .idle
    public internal(set) var peerName: String?
    public internal(set) var negotiatedVersion: UInt32?
    /// The peer's physical clock minus ours, from `hello` and refined by each ping's round trip: the
    /// measurement with the least uncertainty (`clockOffsetUncertaintyMillis`) of late.
    public internal(set) var clockOffsetMillis: Int64?
    /// How far the true offset may lie from `clockOffsetMillis`, either way: half a ping's round trip, or
    /// half the time the peer's hello may have been under way.
    public internal(set) var clockOffsetUncertaintyMillis: Int64?
    /// When (monotonic ms) `clockOffsetMillis` was measured.
    var clockOffsetMeasuredMonotonic: Int64 = 0
    /// When (monotonic ms) our hello left: the peer's hello was stamped no earlier, give or take one leg.
    var helloSentMonotonic: Int64 = 0
    /// The last time a batch from the peer was applied, or the peer confirmed it has all of our history: a
    /// wall time, for people to read in status.
    public internal(set) var lastSyncMillis: Int64?
    /// Our changes the peer has not acknowledged: entries sent and not yet durable there, plus the positions
    /// of our history not sent yet (an upper bound for those, as a rewritten key leaves a gap). 0 means the
    /// peer is current.
    public internal(set) var pendingCount = 0
    /// Our head when `pendingCount` was last counted; nil until it first was (a session refused before it was
    /// established never counts, and its 0 means nothing).
    public internal(set) var pendingCountedAtHead: Int64?
    /// Why the session ended, once it has.
    public internal(set) var closeReason: CloseReason?

    var decoder: FrameDecoder
    var outbox: [SessionOutput] = []
    var warnedAboutClock = false
    /// Optional frame types already logged as ignored: once each per session, as a flood of them (or a newer
    /// protocol's hint on every batch) must not fill the log.
    var loggedIgnoredTypes: Set<UInt8> = []
    /// Resend requests answered in this session (`receiveRequest`).
    var resendsAnswered = 0
    /// Which `sent` and `applied` lines are written, and what went unlogged.
    var batchLog: RoutineBatchLog
    /// The monotonic reading of the latest event that came with the time: events without one (a send
    /// horizon saved, a shutdown) happen right after such an event.
    var eventMonotonic: Int64 = 0

    // The two stores' epochs.
    var localStoreID = ""
    var peerStoreID = ""
    /// Our watermark for the peer when the session started, as our `hello` announced it.
    var announcedWatermark: Watermark?

    // Receiving the peer's history.
    /// How far the peer's history is durably applied here: the watermark we store and acknowledge.
    var received: Int64 = 0
    var receivedFirstBatch = false
    /// The peer's head as its hello announced it (nil from a groupsync before that field), and whether this
    /// store has caught up with the peer once (`ReplicaStore.hasCaughtUp`).
    var peerHeadAtHello: Int64?
    var caughtUpRecorded = false
    /// When to ask again for entries our clock refused, on the monotonic clock like every deadline.
    var retryAtMonotonic: Int64?
    /// An entry was refused and not resent yet: later batches may start beyond the watermark meanwhile.
    var awaitingResend = false

    // Sending our history.
    /// Our history is sent up to here (or asked to be resent from here).
    var sendCursor: Int64 = 0
    var highestSent: Int64 = 0
    /// The send horizon as stored: the highest sequence we may have sent this peer (see `ReplicaStore`).
    var sendHorizon: Int64 = 0
    /// The peer's resume point was void because our history went back (a restored backup, a power cut that
    /// took history it had read): the horizon is raised only as the peer acknowledges what we resend, so a
    /// resume point it kept from the old history is still caught if this session ends first (§6.3). Until the
    /// resend is acknowledged (`resendThrough`).
    var raiseHorizonOnAck = false
    /// Our head when the session began resending after a void resume point: once the peer acknowledges through
    /// it, its resume point speaks of our current history, and the horizon is saved after each send again.
    var resendThrough: Int64 = 0
    /// A horizon raised for frames in the outbox, to be saved once they are out (`saveSendHorizon`).
    var horizonToSave: Int64?
    var batchesInFlight = 0
    /// Our history through here has been looked at for this peer: `localChangesAvailable` for a commit at or
    /// below it has nothing to do, so a shell may skip the call.
    public internal(set) var consideredHead: Int64 = -1
    var sentFirstBatch = false
    /// Sent batches whose end the peer has not acknowledged as durable, with their entry counts.
    var unacknowledged: [(through: Int64, count: Int)] = []
    var echo = EchoFilter()

    // Liveness, on the monotonic clock: a step of the wall clock must neither hide a vanished peer nor
    // condemn a live one (see `SessionTime`).
    /// When the last frame arrived: a shell in doubt whether the peer is still there pings it (`ping(at:)`)
    /// and watches this move.
    public internal(set) var lastReceivedMonotonic: Int64 = 0
    var lastPingMonotonic: Int64 = 0
    /// Our last ping, as both clocks read when it left: its pong's round trip is measured on the monotonic
    /// clock, so a wall step in between does not spoil the offset estimate.
    var lastPingSent: SessionTime?

    public init(peer: DeviceID, deviceName: String, configuration: SessionConfiguration = SessionConfiguration()) {
        self.peer = peer
        self.peerLabel = peer.short
        self.deviceName = deviceName
        self.configuration = configuration
        self.decoder = FrameDecoder(maxFrameBytes: configuration.maxFrameBytes)
        self.batchLog = RoutineBatchLog(intervalMillis: configuration.routineLogIntervalMillis)
    }

    public var status: SessionStatus {
        SessionStatus(peer: peer, peerName: peerName, phase: phase, negotiatedVersion: negotiatedVersion,
                      lastSyncMillis: lastSyncMillis, clockOffsetMillis: clockOffsetMillis, pendingCount: pendingCount,
                      pendingCountedAtHead: pendingCountedAtHead, closeReason: closeReason)
    }

    public var isClosed: Bool { phase == .closed }

    // MARK: Events

    /// Opens the session: sends our `hello`. Call once, right after the connection is authenticated.
    public mutating func start<S: ReplicaStore>(at now: SessionTime, store: S) -> [SessionOutput] {
        handle(at: now) { (session: inout PeerSession) throws(CloseReason) in
            guard session.phase == .idle else { return }
            try session.sendHello(at: now, store: store)
        }
    }

    /// Bytes read from the connection, in whatever chunks the transport delivered.
    public mutating func receive<S: ReplicaStore>(bytes: some Collection<UInt8>, at now: SessionTime, store: S) -> [SessionOutput] {
        handle(at: now) { (session: inout PeerSession) throws(CloseReason) in
            let frames: [Frame]
            do throws(FrameError) { frames = try session.decoder.feed(bytes) } catch { throw .malformedFrame(error) }
            for frame in frames { try session.process(frame, at: now, store: store) }
        }
    }

    /// One complete frame, for shells that do their own framing.
    public mutating func receive<S: ReplicaStore>(frame: Frame, at now: SessionTime, store: S) -> [SessionOutput] {
        handle(at: now) { (session: inout PeerSession) throws(CloseReason) in try session.process(frame, at: now, store: store) }
    }

    /// Something was committed to the store (locally or from another peer): send the peer what it lacks.
    /// `head`: the store's last sequence, if the caller has just read it (after the commit), which spares
    /// the session reading it again.
    public mutating func localChangesAvailable<S: ReplicaStore>(at now: SessionTime, store: S, head: Int64? = nil) -> [SessionOutput] {
        handle(at: now) { (session: inout PeerSession) throws(CloseReason) in try session.sendAvailable(store: store, knownHead: head) }
    }

    /// Whether the last event's frames raised the send horizon, which `saveSendHorizon` must now store.
    public var hasSendHorizonToSave: Bool { horizonToSave != nil }

    /// Stores the send horizon raised by the frames the last event produced: call right after writing them,
    /// even when that event also closed the session (a goodbye after a last batch). Until it is stored, a new
    /// session with this peer would resend our history rather than resume.
    public mutating func saveSendHorizon<S: ReplicaStore>(store: S) -> [SessionOutput] {
        guard phase != .closed else {
            // Nothing left to tell the peer; a failure only costs the next session a resend.
            try? saveRaisedSendHorizon(store: store)
            return []
        }
        return handle { (session: inout PeerSession) throws(CloseReason) in try session.saveRaisedSendHorizon(store: store) }
    }

    /// Asks the peer for a sign of life now, whatever the keep-alive timer says: its pong (or anything else
    /// it sends) moves `lastReceivedMonotonic`. For a shell that has reason to doubt the connection, such as
    /// the same device dialing in again (it would not while its side of this session lived). Nothing before
    /// the session is established.
    public mutating func ping(at now: SessionTime) -> [SessionOutput] {
        handle(at: now) { (session: inout PeerSession) throws(CloseReason) in
            if session.phase == .established { session.sendPing(at: now) }
        }
    }

    /// Time passed; call when the monotonic clock reaches `nextDeadline` (calling earlier or later is harmless).
    public mutating func tick(at now: SessionTime) -> [SessionOutput] {
        handle(at: now) { (session: inout PeerSession) throws(CloseReason) in try session.checkTimers(at: now) }
    }

    /// Ends the session on purpose: tells the peer goodbye, then closes. `flushingDeferredEchoes`: first send
    /// the echoes it deferred (so the next session does not send them back), when flow control lets it — for
    /// a connection that still works. Only those: nothing the peer lacks leaves after the decision to end,
    /// since the peer may just have been removed.
    public mutating func shutdown(reason: String, flushingDeferredEchoes: Bool = false) -> [SessionOutput] {
        handle { (session: inout PeerSession) throws(CloseReason) in
            if flushingDeferredEchoes { try session.sendDeferredEchoes() }
            throw .shutdown(reason)
        }
    }

    /// The connection ended under the session without a goodbye: closes it without sending anything (found
    /// by review: logged as our own shutdown, with a goodbye written to the dead socket).
    public mutating func connectionLost(_ what: String) -> [SessionOutput] {
        handle { (_: inout PeerSession) throws(CloseReason) in throw .connectionLost(what) }
    }

    /// The next time `tick` has something to do, as a reading of the monotonic clock (`SessionTime.
    /// monotonicMillis`), or `nil` once closed. An idle session sleeps a whole keep-alive period between
    /// wake-ups.
    public var nextDeadline: Int64? {
        switch phase {
        case .idle, .closed: return nil
        case .handshaking: return lastReceivedMonotonic + configuration.deadAfterMillis
        case .established:
            let deadlines = [lastReceivedMonotonic + configuration.deadAfterMillis,
                             max(lastReceivedMonotonic, lastPingMonotonic) + configuration.keepAliveMillis,
                             retryAtMonotonic].compactMap { $0 }
            return deadlines.min()
        }
    }

    // MARK: Plumbing

    /// Runs one event; any failure ends the session, telling the peer why when it should hear it. `now`:
    /// the event's time, when it came with one.
    private mutating func handle(at now: SessionTime? = nil, _ body: (inout PeerSession) throws(CloseReason) -> Void) -> [SessionOutput] {
        guard phase != .closed else { return [] }
        if let now { eventMonotonic = now.monotonicMillis }
        do throws(CloseReason) {
            try body(&self)
        } catch {
            if let farewell = error.farewell, phase != .idle { send(farewell) }
            let unlogged = batchLog.drain()
            if !unlogged.isEmpty {
                log("unlogged-batches", unlogged.map { RoutineBatchLog.details($0.unlogged, prefix: $0.kind.rawValue).dropFirst() }.joined(separator: " "))
            }
            log("closed", "code=\(error.code?.description ?? "none") reason=\(quoted(error.description))")
            phase = .closed
            closeReason = error
            outbox.append(.close(error))
        }
        let outputs = outbox
        outbox = []
        return outputs
    }

    private mutating func process<S: ReplicaStore>(_ frame: Frame, at now: SessionTime, store: S) throws(CloseReason) {
        guard phase != .closed else { return }
        guard phase != .idle else { throw .protocolViolation("bytes arrived before the session was started") }
        lastReceivedMonotonic = now.monotonicMillis
        let decoded: Message?
        do throws(MessageError) {
            decoded = try MessageCodec.decode(frame, version: wireVersion, maxBodyBytes: configuration.maxFrameBytes)
        } catch {
            throw .malformedMessage(error)
        }
        guard let message = decoded else {
            if loggedIgnoredTypes.insert(frame.type).inserted {
                log("ignored", "type=0x\(String(frame.type, radix: 16)) why=optional-unknown (logged once per session)")
            }
            return
        }
        switch (phase, message) {
        case (.handshaking, .hello(let hello)): try receiveHello(hello, at: now, store: store)
        case (.established, .changes(let batch)): try receiveChanges(batch, at: now, store: store)
        case (.established, .ack(let sequence)): try receiveAck(sequence, at: now, store: store)
        case (.established, .request(let after)): try receiveRequest(after: after, store: store)
        case (.established, .ping(let millis)):
            // Our physical time: the peer compares it with its own clock (§6.2).
            send(.pong(echoMillis: millis, millis: now.wallMillis))
            try sendAvailable(store: store, flushingEchoes: true)
        case (.established, .pong(let echo, let millis)):
            try receivePong(echoMillis: echo, peerMillis: millis, at: now)
            try sendAvailable(store: store, flushingEchoes: true)
        case (_, .goodbye(let code, let text)): throw .peerSaidGoodbye(code, PeerText.shortened(text))
        case (_, .error(let code, let text)): throw .peerReportedError(code, PeerText.shortened(text))
        default: throw .unexpectedMessage(message.type, phase: phase)
        }
    }

    /// The layouts in use: the negotiated version, or before `hello` (when only version-independent
    /// messages may pass) the first one.
    var wireVersion: UInt32 { negotiatedVersion ?? ProtocolVersion.original }

    mutating func send(_ message: Message) {
        outbox.append(.send(MessageCodec.encode(message, version: wireVersion)))
    }

    mutating func send(_ frame: Frame) {
        outbox.append(.send(frame.encoded))
    }

    /// One greppable line: `peer=<id> event=<event> key=value…`.
    mutating func log(_ event: String, _ details: String = "") {
        outbox.append(.log("peer=\(peerLabel) event=\(event)" + (details.isEmpty ? "" : " " + details)))
    }

    /// Text from the peer (names, reasons) goes into logs escaped, so it cannot forge log lines.
    func quoted(_ text: String) -> String {
        var out = ""
        JSONWriter.writeString(text, into: &out)
        return out
    }

    /// A store call whose failure ends the session; the store's own transaction keeps it unchanged.
    func storeCall<T, Failure: Error>(_ what: String, _ body: () throws(Failure) -> T) throws(CloseReason) -> T {
        do throws(Failure) { return try body() } catch { throw .storeFailed("\(what): \(error)") }
    }
}
