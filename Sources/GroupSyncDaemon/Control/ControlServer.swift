import Glibc
import GroupSyncCore
import GroupSyncStore
import Synchronization

/// The daemon's local control socket, `control.sock` in the home (mode 0700, 0777 less the umask 077, inside a
/// 0700 folder: only the user reaches it). One JSON request line in, one JSON response line out.
///
/// One thread serves every client with `poll`, the way Redis serves its clients: each turn it reads whatever
/// all ready clients sent, commits all their writes in one transaction (one fsync), and answers them all.
/// The fsync, not the CPU, is what a write costs here, so the more writes a turn gathers the better; a thread
/// per client handing writes to a committer gathered no more and cost more thread switches. Requests other
/// than writes (`status`, `get`, the notification commands, which may wait for D-Bus) go to a worker thread
/// with the rest of that client's lines, so they never hold up anyone's writes; the client's later lines
/// wait until they are answered, which keeps each client's answers in order.
final class ControlServer: @unchecked Sendable {
    private let fd: Int32
    private let path: String
    private unowned let daemon: Daemon
    /// A pipe that wakes the loop: to stop, or because a worker finished with a client.
    private let wakeFD: Int32
    private let wakeWriteFD: Int32
    /// Only the loop thread touches these.
    private var clients: [Int32: ClientState] = [:]
    /// Whom a turn waits for before it commits.
    private var gathering = TurnGathering()
    /// Reused for every read from a client.
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    /// Clients workers are done with; `broken`: the worker could not write its answers whole.
    private let finished = Mutex<(fds: [(fd: Int32, broken: Bool)], stopping: Bool)>(([], false))
    /// The socket file this server made (device and inode), so that closing removes it only while it is still
    /// ours: a home moved aside and made afresh at the same path has a newer daemon's socket there.
    private let socketFile: FileIdentity?
    /// Kept open to be given up when the process runs out of descriptors (`refuseOneWithoutDescriptors`).
    private var reserveFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
    /// Until when (monotonic ms) the listening socket is left out of `poll`: no connection could be taken
    /// even with the reserve given up (`refuseOneWithoutDescriptors`).
    private var acceptPausedUntil: Int64 = 0

    /// A client that sends nothing for this long is let go, so forgotten connections do not pile up.
    static let idleMillis: Int64 = 600_000
    static let maxClients = 1024
    /// A client's requests read and not yet answered, at most: past this the loop stops reading it until it
    /// has been answered, so a client that sends without reading its answers cannot grow the daemon's memory.
    static let maxQueuedRequests = 1024

    init(home: Home, daemon: Daemon) throws(HomeError) {
        path = home.path + "/control.sock"
        self.daemon = daemon
        unlink(path)  // a stale socket from a killed daemon; the daemon lock proves no one else uses it
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        self.fd = fd
        guard fd >= 0 else { throw .cannotCreate(path: path, reason: String(cString: strerror(errno))) }
        guard let bound = UnixSocketAddress.with(path, { bind(fd, $0, $1) }) else {
            Glibc.close(fd)
            throw .socketPathTooLong(path: path)
        }
        var pipeFDs: [Int32] = [-1, -1]
        guard bound == 0, listen(fd, 64) == 0, pipe(&pipeFDs) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw .cannotCreate(path: path, reason: reason)
        }
        wakeFD = pipeFDs[0]
        wakeWriteFD = pipeFDs[1]
        for end in pipeFDs { Self.makeNonBlocking(end) }
        socketFile = FileIdentity(path: path)
    }

    /// The loop; returns after `close()`.
    func serve() {
        while true {
            var ready: Set<Int32> = []
            guard gather(into: &ready, waitMillis: idleWaitMillis()) else { return stop() }
            // Give last turn's writers the CPU for a moment and take what they sent (`TurnGathering`).
            let start = monotonicMicros()
            while gathering.keepsWaiting(ready: ready, startMicros: start, nowMicros: monotonicMicros()) {
                sched_yield()
                guard gather(into: &ready, waitMillis: 0) else { return stop() }
            }
            answer(ready.sorted())
            closeFinishedAndIdle()
        }
    }

    /// Waits (at most `waitMillis`; -1: until something happens) and takes what is ready: new clients, bytes
    /// from clients (added to `ready`), clients handed back by workers. False once `close()` was called.
    private func gather(into ready: inout Set<Int32>, waitMillis: Int32) -> Bool {
        // Busy clients are left out: their worker owns them until it hands them back.
        var waitMillis = waitMillis
        let pausedFor = acceptPausedUntil - monotonicMillis()
        if pausedFor > 0 { waitMillis = waitMillis < 0 ? Int32(pausedFor) : min(waitMillis, Int32(pausedFor)) }
        var fds = [pollfd(fd: fd, events: pausedFor > 0 ? 0 : Int16(POLLIN), revents: 0), pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        for (client, state) in clients where !state.busy {
            // A client whose stream ended is only written to (reading its end again would spin). One whose answers
            // are still unsent, or that has many requests queued, is not read either until it catches up: the
            // kernel's socket buffer, not the daemon's memory, then holds what it keeps sending.
            let holdsBack = !state.output.isEmpty || state.requests.count >= Self.maxQueuedRequests
            let reading = state.ended || holdsBack ? 0 : Int16(POLLIN)
            fds.append(pollfd(fd: client, events: reading | (state.output.isEmpty ? 0 : Int16(POLLOUT)), revents: 0))
        }
        while poll(&fds, nfds_t(fds.count), waitMillis) < 0 {
            guard errno == EINTR else { return false }
        }
        for event in fds where event.revents != 0 {
            let readyFD = event.fd
            if readyFD == fd {
                acceptAll()
            } else if readyFD == wakeFD {
                var drained = [UInt8](repeating: 0, count: 64)
                _ = read(wakeFD, &drained, drained.count)
                let (done, stopping) = finished.withLock { state in
                    defer { state.fds.removeAll() }
                    return (state.fds, state.stopping)
                }
                if stopping { return false }
                for (client, broken) in done where clients[client] != nil {
                    clients[client]!.busy = false
                    // Part of an answer may be in the stream already: anything sent after it would be read as
                    // the rest of that line, and answers would no longer match requests. Close it instead.
                    if broken {
                        clients[client]!.ended = true
                        clients[client]!.requests.removeAll()
                        clients[client]!.input.removeAll()
                    }
                    ready.insert(client)
                }
            } else if clients[readyFD] != nil {
                // A hang-up or error also goes through `flush`: its failing write marks the client done.
                if event.revents & Int16(POLLOUT | POLLHUP | POLLERR) != 0 { flush(readyFD) }
                if event.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 && !clients[readyFD]!.ended { receive(readyFD) }
                ready.insert(readyFD)
            }
        }
        return true
    }

    func close() {
        // Only our own socket: found by review, a daemon whose home had been moved aside, stopping, removed the
        // socket of the daemon serving the new home at that path, which then no command could reach.
        if let socketFile, FileIdentity(path: path) == socketFile { unlink(path) }
        finished.withLock { $0.stopping = true }
        wake()
    }

    private func wake() {
        var one: UInt8 = 1
        _ = write(wakeWriteFD, &one, 1)
    }

    /// Closes everything but the wake pipe, which a worker still running may write to.
    private func stop() {
        for client in clients.keys { Glibc.close(client) }
        clients.removeAll()
        Glibc.close(fd)
        if reserveFD >= 0 { Glibc.close(reserveFD) }
    }

    // MARK: Clients

    private func acceptAll() {
        while true {
            let client = accept(fd, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if errno == EMFILE || errno == ENFILE { return refuseOneWithoutDescriptors() }
                return  // EAGAIN: none left (or the socket closed)
            }
            Self.makeNonBlocking(client)
            guard clients.count < Self.maxClients else {
                Glibc.close(client)
                continue
            }
            clients[client] = ClientState(now: monotonicMillis())
        }
    }

    /// Out of descriptors, the waiting connection stays in the backlog and the listening socket stays
    /// readable, so `poll` would return at once forever: the loop would spin. The descriptor held in reserve
    /// is given up for a moment to take that connection and close it (the client sees the connection end),
    /// until the backlog is empty or a descriptor frees up.
    /// When even that fails (the limit was lowered below what the process holds: found by review, the loop
    /// then spun at full CPU for as long as it stayed so), the listening socket is left alone for 200 ms.
    private func refuseOneWithoutDescriptors() {
        // Said (once a minute): a command that finds its connection closed, or a daemon that stops answering
        // them, is otherwise a mystery to whoever reads the log. `errno` is the failed accept's.
        let reason = "reason=\"out of file descriptors (\(String(cString: strerror(errno))))\""
        if reserveFD >= 0 { Glibc.close(reserveFD) }
        let client = accept(fd, nil, nil)
        if client >= 0 {
            Glibc.close(client)
            daemon.throttled.write(key: "control out of descriptors", "event=control-client-refused \(reason) action=close")
        } else if errno == EMFILE || errno == ENFILE {
            acceptPausedUntil = monotonicMillis() + 200
            daemon.throttled.write(key: "control accept paused", "event=control-accept-paused \(reason) action=\"leave the control socket alone for 200 ms\"")
        }
        reserveFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
    }

    private static func makeNonBlocking(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    /// Reads what a client has sent, up to `maxQueuedRequests` requests, and notes the end of its stream. A
    /// line too long to be a request is answered with an error and skipped, however its bytes arrive, and the
    /// connection goes on (it used to be closed when the line came in several reads: found by review).
    private func receive(_ client: Int32) {
        while clients[client]!.requests.count < Self.maxQueuedRequests {
            let n = chunk.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
            if n > 0 {
                clients[client]!.receive(chunk[0..<n], at: monotonicMillis())
                // A short read took all there was: the next `poll` says when more comes (and sees an EOF).
                if n < chunk.count { break }
                continue
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { break }
            // EOF or an error: answer what is complete, then close.
            clients[client]!.streamEnded()
            break
        }
    }

    /// Answers the complete lines of the ready clients: every client's leading writes in one commit, the
    /// rest (and any request after a non-write) on a worker thread for that client.
    private func answer(_ ready: [Int32]) {
        var writes: [Result<LocalWrite, TypedJSONError>] = []
        var plans: [(client: Int32, writes: Int, rest: [ReceivedRequest])] = []
        for client in ready {
            guard let state = clients[client], !state.busy, state.output.isEmpty, !state.requests.isEmpty else { continue }
            let requests = state.requests
            clients[client]!.requests.removeAll()
            var leading = 0
            while leading < requests.count, let write = requests[leading].write {
                writes.append(write)
                leading += 1
            }
            plans.append((client, leading, Array(requests[leading...])))
        }
        let answers = writes.isEmpty ? [] : daemon.localWrites(writes)
        // A client handed to a worker is answered there, later: it is not about to send its next writes.
        gathering.committed(writers: plans.filter { $0.writes > 0 && $0.rest.isEmpty }.map(\.client))
        var offset = 0
        for plan in plans {
            let mine = Array(answers[offset..<offset + plan.writes])
            offset += plan.writes
            if plan.rest.isEmpty {
                send(mine, to: plan.client)
            } else {
                handOff(plan.rest, after: mine, client: plan.client)
            }
        }
    }

    /// A worker writes its answers once they add up to this much (and at the end).
    static let answerBatchBytes = 64 * 1024

    /// Answers `requests` on a worker thread (they may wait for D-Bus or a read), the client unwatched meanwhile.
    private func handOff(_ requests: [ReceivedRequest], after answered: [String], client: Int32) {
        clients[client]!.busy = true
        let started = spawnThread { [self] in
            // Answers leave once 64 KiB of them are made, rather than all of them joined at the end: a client that
            // pipelines many large `get`s and reads nothing then makes the daemon hold about one answer (up to
            // about 6 MiB), not all of them (found by audit: 100 `get`s of a 1 MiB value held 410 MB until it
            // left); small answers still share a write.
            var unsent = answered.joined(separator: "\n")
            func deliver(_ answer: String) -> Bool {
                unsent += unsent.isEmpty ? answer : "\n" + answer
                guard unsent.utf8.count >= Self.answerBatchBytes else { return true }
                defer { unsent = "" }
                return LineSocket.writeLine(client, unsent)
            }
            let written = respond(to: requests, deliver: deliver) && (unsent.isEmpty || LineSocket.writeLine(client, unsent))
            finished.withLock { $0.fds.append((client, !written)) }
            wake()
        }
        if !started {
            // No thread to be had (a task limit): the client is closed unanswered rather than left waiting.
            clients[client]!.busy = false
            clients[client]!.ended = true
            clients[client]!.requests.removeAll()
        }
    }

    private func send(_ answers: [String], to client: Int32) {
        guard !answers.isEmpty else { return }
        clients[client]!.output += Array((answers.joined(separator: "\n") + "\n").utf8)
        flush(client)
    }

    /// Writes what the socket takes now; waits for EPOLLOUT for the rest.
    private func flush(_ client: Int32) {
        guard var state = clients[client] else { return }
        while !state.output.isEmpty {
            let n = state.output.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            if n > 0 {
                state.output.removeFirst(n)
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                break
            } else {
                state.output.removeAll()
                state.ended = true
            }
        }
        clients[client] = state
    }

    private func closeFinishedAndIdle() {
        let now = monotonicMillis()
        for (client, state) in clients where !state.busy {
            let idle = now - state.lastActive >= Self.idleMillis
            guard (state.ended && state.output.isEmpty) || idle else { continue }
            Glibc.close(client)
            clients[client] = nil
            gathering.closed(client)
        }
    }

    /// No client, no timeout: an idle daemon is not woken. Otherwise wake for the next idle deadline.
    private func idleWaitMillis() -> Int32 {
        let deadlines = clients.values.filter { !$0.busy }.map { $0.lastActive + Self.idleMillis }
        guard let next = deadlines.min() else { return -1 }
        return Int32(clamping: max(0, next - monotonicMillis()))
    }

    /// One connected client, as the loop sees it.
    private struct ClientState {
        var input: [UInt8] = []
        /// Complete lines received and not yet answered, parsed as they arrived.
        var requests: [ReceivedRequest] = []
        var output: [UInt8] = []
        var lastActive: Int64
        /// A worker is answering its lines: the loop neither reads nor writes it meanwhile.
        var busy = false
        /// Its stream ended (or broke): close once what it is owed is written.
        var ended = false
        /// The rest of a line too long to be a request is being read and dropped, up to its newline.
        var skippingLongLine = false

        init(now: Int64) { lastActive = now }

        /// Takes bytes the client sent: complete lines become requests, and a line past the limit is answered
        /// with an error once and its bytes dropped until its newline.
        mutating func receive(_ bytes: ArraySlice<UInt8>, at now: Int64) {
            lastActive = now
            var bytes = bytes
            if skippingLongLine {
                guard let newline = bytes.firstIndex(of: 10) else { return }
                skippingLongLine = false
                bytes = bytes[(newline + 1)...]
            }
            input += bytes
            parseCompleteLines()
            if pendingBytesWithoutNewline > LineSocket.maxLineBytes {
                input.removeAll()
                requests.append(ReceivedRequest(refusing: Self.tooLong))
                skippingLongLine = true
            }
        }

        /// The client's stream ended: a last line without its newline is a request too (`printf
        /// '{"command":"status"}' | socat - UNIX:…` expects an answer); then the connection closes once answered.
        mutating func streamEnded() {
            if !input.isEmpty && !skippingLongLine {
                input.append(10)
                parseCompleteLines()
            }
            ended = true
        }

        static let tooLong = "the request line is longer than \(LineSocket.maxLineBytes) bytes (its newline not counted); it was skipped"

        /// Moves the complete lines received into `requests`, parsed; a partial last line stays. Called as
        /// bytes arrive, so a turn's parsing happens while the loop still waits for other clients' writes.
        mutating func parseCompleteLines() {
            guard let lastNewline = input.lastIndex(of: 10) else { return }
            for line in input[..<lastNewline].split(separator: 10, omittingEmptySubsequences: false) {
                if line.count > LineSocket.maxLineBytes {
                    requests.append(ReceivedRequest(refusing: Self.tooLong))
                } else if let text = String(validating: line, as: UTF8.self) {
                    requests.append(ReceivedRequest(text))
                } else {
                    // Decoding with repair would store U+FFFD in place of what was sent.
                    requests.append(ReceivedRequest(refusing: "the request is not valid UTF-8"))
                }
            }
            input.removeSubrange(...lastNewline)
        }

        var pendingBytesWithoutNewline: Int { input.count - ((input.lastIndex(of: 10)).map { $0 + 1 } ?? 0) }
    }

    /// Answers requests in order, handing each answer (for a run of consecutive writes, committed as one
    /// group, their answers' lines) to `deliver` as soon as it is made. Once a `deliver` fails (the client
    /// left, or read nothing for 30 s) the rest is still done, as the loop commits the writes of a client that
    /// left, but no longer answered; returns whether every answer was delivered.
    private func respond(to requests: [ReceivedRequest], deliver: (String) -> Bool) -> Bool {
        var delivering = true
        func send(_ answer: String) { if delivering { delivering = deliver(answer) } }
        var pendingWrites: [Result<LocalWrite, TypedJSONError>] = []
        func flushWrites() {
            guard !pendingWrites.isEmpty else { return }
            send(daemon.localWrites(pendingWrites).joined(separator: "\n"))
            pendingWrites.removeAll()
        }
        for received in requests {
            if let write = received.write {
                pendingWrites.append(write)
                continue
            }
            flushWrites()
            let answer: String
            if let (request, command) = received.request {
                switch command {
                case "status": answer = daemon.statusReport().json
                case "get": answer = daemon.read(request)
                case "notify-post", "notify-dismiss", "notify-shield", "notify-actions": answer = NotificationRequests.handle(command, request, daemon.notifications)
                default: answer = ControlResponse.error("unknown command '\(command)' (status, get, set, delete, notify-post, notify-dismiss, notify-shield, notify-actions)", badInput: true)
                }
            } else {
                answer = ControlResponse.error(received.problem ?? "the request is not a JSON object with a command", badInput: true)
            }
            send(answer)
        }
        flushWrites()
        return delivering
    }
}
