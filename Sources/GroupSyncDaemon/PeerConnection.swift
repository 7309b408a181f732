import Glibc
import GroupSyncCore
import GroupSyncStore
import GroupSyncTransport
import Synchronization

/// One live TLS connection with one peer, running the pure `PeerSession` over it.
///
/// Two threads: the reader feeds received bytes (and time, when reads time out) to the session; the writer
/// drains an outbound queue. Session outputs only ever *queue* bytes, so no lock is held while a socket
/// blocks, and two peers sending large batches to each other cannot deadlock on full buffers.
final class PeerConnection: @unchecked Sendable {
    let peer: DeviceID
    /// Who dialed: decides which connection survives when both devices dial each other at once.
    let initiator: DeviceID
    let transport: TLSConnection
    private let log: DaemonLog
    /// Reads the monotonic and wall clocks for each session event (`SessionTime.now` in the daemon).
    private let clock: @Sendable () -> SessionTime

    /// The session and the store connection it uses, only touched under this lock.
    private let sessionLock = Mutex(())
    private nonisolated(unsafe) var session: PeerSession
    private let store: Store

    private let outbound = Condition()
    private nonisolated(unsafe) var queue: [[UInt8]] = []
    /// What `queue` holds, counting a frame's bookkeeping too, so a flood of tiny frames is measured fairly.
    private nonisolated(unsafe) var queuedBytes = 0
    /// A peer that does not read (yet keeps sending pings, whose pongs pile up) is cut off here. Flow control
    /// keeps honest traffic far below: at most 4 batches of one frame each are unacknowledged.
    static let maxQueuedBytes = 4 * Frame.defaultMaxBytes + 8 * 1024 * 1024
    static let frameOverheadBytes = 64
    private nonisolated(unsafe) var closeAfterQueue = false
    /// Someone (the writer thread, or a session event writing a small frame itself) is writing to the socket.
    private nonisolated(unsafe) var writing = false
    private nonisolated(unsafe) var writerFinished = false
    /// The reader has stopped reading: what the peer still sends is unread, and the writer may drain it.
    private nonisolated(unsafe) var readerFinished = false
    /// `stop` ended the session (a goodbye): the reader is still reading, and the peer answers by closing.
    private nonisolated(unsafe) var stopRequested = false
    private let finished = Condition()
    private nonisolated(unsafe) var isFinished = false
    private let lastStatus: Mutex<SessionStatus>
    /// Told once per session, when the peer's hello established it, with the name the peer gave (under the
    /// session lock; `status` already shows the session established).
    nonisolated(unsafe) var established: ((String) -> Void)?
    private nonisolated(unsafe) var establishedTold = false
    /// The peer refused this device's certificate (a TLS alert read after the handshake): it has not paired
    /// this device, or no longer does. Kept typed, so the daemon need not recognise the refusal by its text.
    private let refused = Atomic<Bool>(false)
    /// `session.consideredHead`, readable without waiting for the session.
    private let consideredHead = Atomic<Int64>(-1)
    /// The highest store head announced by `localChangesAvailable` and not yet looked at (-1: none;
    /// `Int64.max`: a change whose head the caller could not read).
    private let announcedHead = Atomic<Int64>(-1)

    init(peer: DeviceID, initiator: DeviceID, transport: TLSConnection, store: Store, deviceName: String,
         configuration: SessionConfiguration, log: DaemonLog, clock: @escaping @Sendable () -> SessionTime = SessionTime.now) {
        self.peer = peer
        self.initiator = initiator
        self.transport = transport
        self.store = store
        self.log = log
        self.clock = clock
        let session = PeerSession(peer: peer, deviceName: deviceName, configuration: configuration)
        self.session = session
        self.lastStatus = Mutex(session.status)
    }

    var status: SessionStatus { lastStatus.withLock { $0 } }
    var isAlive: Bool { finished.locked { !isFinished } }
    /// Whether the session got as far as established (read once `run` has returned).
    var wasEstablished: Bool { sessionLock.withLock { _ in establishedTold } }
    /// Whether the peer refused this device (read once `run` has returned).
    var wasRefusedByPeer: Bool { refused.load(ordering: .acquiring) }

    /// Runs the connection on the calling thread until it ends (the writer gets its own thread).
    func run() {
        guard spawnThread({ [self] in writerLoop() }) else {
            // No thread for the writer (a task limit): this connection cannot work, the daemon goes on.
            transport.close()
            finished.locked { isFinished = true }
            finished.broadcast()
            return
        }
        driveSession { session, now in session.start(at: now, store: store) }
        readerLoop()
        outbound.locked { closeAfterQueue = true; readerFinished = true }
        outbound.broadcast()
        // Let the writer flush the session's last words (the `error` or `goodbye` that tells the peer why),
        // but not for long: a peer that does not read them is not waited for.
        let deadline = monotonicMillis() + 2_000
        outbound.locked {
            while !writerFinished, monotonicMillis() < deadline { outbound.wait(millis: 50) }
        }
        transport.shutdown()
        finished.locked { isFinished = true }
        finished.broadcast()
    }

    /// Our store changed (a local write, or entries from another peer): send what this peer lacks. `head`:
    /// the store's last sequence after that change, if the caller read it.
    ///
    /// Never waits for the session. When another thread holds it — typically the reader, syncing a batch it
    /// just applied, whose commit is what woke the caller — the change is left for that thread to look at
    /// when it lets go (`lookAtAnnouncedChanges`), and by then the reader's own send has usually covered it.
    /// Waiting instead put the daemon's watch thread in the reader's way: the reader, done with one batch,
    /// queued behind it for the session before it could read the next.
    func localChangesAvailable(head: Int64? = nil) {
        let announced = head ?? Int64.max
        var current = announcedHead.load(ordering: .sequentiallyConsistent)
        while announced > current {
            let (exchanged, original) = announcedHead.compareExchange(expected: current, desired: announced, ordering: .sequentiallyConsistent)
            if exchanged { break }
            current = original
        }
        lookAtAnnouncedChanges()
    }

    /// Runs `localChangesAvailable` for announced heads the session has not looked at, if the session is
    /// free. Every holder of the session calls it after letting go, so an announcement made while the session
    /// was taken is never left behind: either the announcer finds it free, or the holder finds the announcement.
    private func lookAtAnnouncedChanges() {
        // Between the announcer's store and its try of the lock, and between a holder's unlock and its load
        // of the announcement: with a fence on both sides, at least one of the two sees the other.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        while announcedHead.load(ordering: .sequentiallyConsistent) > consideredHead.load(ordering: .sequentiallyConsistent) {
            let ran: Bool? = sessionLock.withLockIfAvailable { _ in
                let wanted = announcedHead.exchange(-1, ordering: .sequentiallyConsistent)
                if wanted > session.consideredHead {
                    let head = wanted == Int64.max ? nil : wanted  // read by the announcer after its commit
                    runLocked { session, now in session.localChangesAvailable(at: now, store: store, head: head) }
                }
                return true
            }
            if ran == nil { return }
        }
    }

    /// Ends the session politely (goodbye), then the connection.
    func stop(reason: String) {
        outbound.locked { stopRequested = true }
        driveSession { session, _ in session.shutdown(reason: reason, flushingDeferredEchoes: true) }
        outbound.locked { closeAfterQueue = true }
        outbound.broadcast()
    }

    /// Whether the peer shows a sign of life within `millis`: a ping goes out, and any frame that arrives after
    /// it counts. A session still in its handshake counts as alive (its hello is awaited anyway); one that
    /// has ended does not.
    func answersPing(withinMillis millis: Int64) -> Bool {
        var asked: Int64 = 0
        var established = false
        driveSession { session, now in
            asked = now.monotonicMillis
            established = session.phase == .established
            return session.ping(at: now)
        }
        guard established else { return isAlive }
        let deadline = asked + millis
        while clock().monotonicMillis < deadline {
            let (heard, closed) = sessionLock.withLock { _ in (session.lastReceivedMonotonic >= asked, session.isClosed) }
            if heard { return true }
            if closed { return false }
            usleep(20_000)
        }
        return false
    }

    /// Waits until `run` has returned, at most `millis`.
    func waitUntilFinished(millis: Int64) {
        let deadline = monotonicMillis() + millis
        finished.locked {
            while !isFinished, monotonicMillis() < deadline { finished.wait(millis: 50) }
        }
    }

    // MARK: Loops

    private func readerLoop() {
        while true {
            let closed = sessionLock.withLock { _ in session.isClosed }
            lookAtAnnouncedChanges()
            if closed { return }
            let timeout = readTimeoutMillis()
            let bytes: [UInt8]
            do {
                bytes = try transport.read(upTo: 256 * 1024, timeout: .milliseconds(timeout))
            } catch .readTimedOut {
                driveSession { session, now in session.tick(at: now) }
                continue
            } catch {
                if case .refusedByPeer = error { refused.store(true, ordering: .releasing) }
                // The transport's error says what happened ("connection lost: …" when the peer or the network dropped it).
                driveSession { session, _ in session.connectionLost("\(error)") }
                return
            }
            if bytes.isEmpty {
                driveSession { session, _ in session.connectionLost("the peer closed the connection") }
                return
            }
            driveSession { session, now in session.receive(bytes: bytes, at: now, store: store) }
        }
    }

    /// Sleep no longer than the session's next deadline, and never more than a keep-alive period,
    /// so an idle connection wakes at most once per 30 s. The deadline is a monotonic reading, so a step of
    /// the wall clock neither stretches this sleep nor cuts it short.
    private func readTimeoutMillis() -> Int64 {
        let deadline = sessionLock.withLock { _ in session.nextDeadline }
        lookAtAnnouncedChanges()
        guard let deadline else { return 30_000 }
        return min(30_000, max(1, deadline - clock().monotonicMillis))
    }

    private func writerLoop() {
        while true {
            var batch: [[UInt8]] = []
            var shouldClose = false
            var stopping = false
            outbound.locked {
                while (queue.isEmpty || writing) && !(closeAfterQueue && !writing) { outbound.wait() }
                batch = queue
                queue.removeAll()
                queuedBytes = 0
                shouldClose = closeAfterQueue && batch.isEmpty
                stopping = stopRequested
                writing = !batch.isEmpty
            }
            if shouldClose {
                // A session that ended on its own (an error, the peer's goodbye): the reader stops reading, and
                // the peer's frames still in flight would be unread, and closing over them sends a reset that
                // can make the peer drop our last frames (the `error` that says why). So wait for the reader
                // to let go (briefly: it may be the one that saw the end, or blocked in a read), then half-close
                // and drain. A graceful stop closes at once: its reader is still reading, and the peer
                // answers the goodbye by closing.
                if stopping {
                    transport.close()
                } else {
                    let deadline = monotonicMillis() + 500
                    outbound.locked { while !readerFinished, monotonicMillis() < deadline { outbound.wait(millis: 50) } }
                    transport.closeAfterDraining()
                }
                outbound.locked { writerFinished = true }
                outbound.broadcast()
                return
            }
            for frame in batch {
                do {
                    try transport.writeAll(frame)
                } catch {
                    // Closed here on purpose (the session ended): not worth a line.
                    if case .connectionClosedLocally = error {} else {
                        log.write("event=write-failed peer=\(peer.short) error=\"\(error)\"")
                    }
                    transport.shutdown()
                    outbound.locked { queue.removeAll(); closeAfterQueue = true }
                    break
                }
            }
            outbound.locked { writing = false }
        }
    }

    /// Frames up to this size may be written by the thread that produced them (see `writeDirectly`).
    static let directWriteMaxBytes = 64 * 1024

    /// Writes a small frame on the calling thread when nothing is queued or being written and the socket
    /// can take it without waiting: a change then leaves without waking the writer thread, one thread switch
    /// less on the path from a write to its peer. Order is kept (nothing is ahead of it), and it cannot
    /// block with the session lock held (the room was checked). Returns false to leave it to the queue.
    private func writeDirectly(_ bytes: [UInt8]) -> Bool {
        guard bytes.count <= Self.directWriteMaxBytes, transport.hasRoomToWrite(bytes.count) else { return false }
        let claimed = outbound.locked { () -> Bool in
            guard queue.isEmpty, !writing, !closeAfterQueue else { return false }
            writing = true
            return true
        }
        guard claimed else { return false }
        var failure: TransportError?
        do { try transport.writeAll(bytes) } catch { failure = error }
        outbound.locked {
            writing = false
            if failure != nil { queue.removeAll(); closeAfterQueue = true }
        }
        // The writer may be waiting for `writing` to clear (a frame queued meanwhile, or the close).
        outbound.broadcast()
        if let failure {
            if case .connectionClosedLocally = failure {} else {
                log.write("event=write-failed peer=\(peer.short) error=\"\(failure)\"")
            }
            transport.shutdown()
        }
        return true
    }

    // MARK: Session outputs

    /// Feeds the session one event and queues its outputs *before* releasing the session lock: the reader
    /// thread (acks) and the watch thread (local changes) both drive the session, and frames queued after
    /// the lock could leave in another order than the session produced them — a batch overtaking the one
    /// before it, which the peer rightly refuses as skipped history. Queueing never blocks, so holding the
    /// lock for it is cheap.
    private func driveSession(_ event: (inout PeerSession, SessionTime) -> [SessionOutput]) {
        sessionLock.withLock { _ in runLocked(event) }
        lookAtAnnouncedChanges()
    }

    /// The body of `driveSession`, for a caller holding the session lock.
    private func runLocked(_ event: (inout PeerSession, SessionTime) -> [SessionOutput]) {
        let outputs = event(&session, clock())
        let status = session.status
        lastStatus.withLock { $0 = status }
        if !establishedTold, let name = status.peerName {
            establishedTold = true
            established?(name)
        }
        consideredHead.store(session.consideredHead, ordering: .sequentiallyConsistent)
        perform(outputs)
        // After the frames, so a change does not wait for this write on its way out.
        if session.hasSendHorizonToSave { perform(session.saveSendHorizon(store: store)) }
    }

    /// Small frames of one event (a ping and the first batch, an ack and a pong) leave in one write: each
    /// write is a TLS record of its own, 22 bytes of overhead, and a reconnect sends a handful of them.
    static let gatherBytes = 16 * 1024

    /// Log lines are written after the frames (but before a close): a line costs a timestamp and a write to
    /// stderr, and the `sent` line of a change would otherwise hold the change back.
    private func perform(_ outputs: [SessionOutput]) {
        var gathered: [UInt8] = []
        var lines: [String] = []
        for output in outputs {
            switch output {
            case .send(let bytes):
                if !gathered.isEmpty && gathered.count + bytes.count > Self.gatherBytes {
                    enqueue(gathered)
                    gathered = []
                }
                // A large frame (a catch-up batch) fills its records anyway: queued as it is, not copied.
                if bytes.count > Self.gatherBytes { enqueue(bytes) } else { gathered.append(contentsOf: bytes) }
            case .close(let reason):
                // Why the session ends is logged before the peer can see it end (nothing here is urgent).
                for line in lines { log.write(line) }
                lines = []
                // Quoted as JSON: the reason may carry the peer's own words (its error text), newlines included.
                log.write("event=session-closed peer=\(peer.short) reason=\(JSONWriter.string(for: .string("\(reason)")))")
                if !gathered.isEmpty { enqueue(gathered) }
                gathered = []
                outbound.locked { closeAfterQueue = true }
                outbound.broadcast()
            case .log(let line):
                lines.append(line)
            case .applied:
                // The store's commit already signalled every watcher (and the daemon, which forwards the
                // change to the other peers' sessions).
                break
            }
        }
        if !gathered.isEmpty { enqueue(gathered) }
        for line in lines { log.write(line) }
    }

    /// Writes bytes at once when that cannot block (`writeDirectly`), else queues them for the writer, or
    /// cuts off a peer that does not read.
    private func enqueue(_ bytes: [UInt8]) {
        if writeDirectly(bytes) { return }
        let overflow = outbound.locked { () -> Bool in
            guard !closeAfterQueue else { return false }
            queuedBytes += bytes.count + Self.frameOverheadBytes
            guard queuedBytes <= Self.maxQueuedBytes else {
                queue.removeAll()
                queuedBytes = 0
                closeAfterQueue = true
                return true
            }
            queue.append(bytes)
            return false
        }
        outbound.broadcast()
        if overflow {
            log.write("event=peer-not-reading peer=\(peer.short) queued_bytes_limit=\(Self.maxQueuedBytes) action=disconnect")
            transport.shutdown()
        }
    }
}
