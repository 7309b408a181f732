import Foundation
import Testing
import GroupSyncCore
import GroupSyncTransport

/// Hostile and careless peers against a real daemon: a paired device that lies about origins and clocks,
/// oversized and replayed frames, a peer that never reads, slow-loris and flooding strangers, and an
/// unpaired device that keeps dialing. Each is refused or bounded, logged once, and an honest peer keeps
/// syncing meanwhile.
@Suite(.serialized) struct HostilePeerTests {
    /// `a` runs a daemon, `honest` runs one and is paired with it, and `b` is paired with `a` but its daemon
    /// never runs: the test speaks for it with its identity.
    final class Scene {
        let folder = TemporaryFolder()
        let a: TestDevice, b: TestDevice, honest: TestDevice

        init() throws {
            a = try TestDevice("a", in: folder)
            b = try TestDevice("b", in: folder)
            honest = try TestDevice("honest", in: folder)
            for device in [a, honest] { try device.start() }
            try pairAll([a, honest])
            // b's daemon never runs: a's dialer finds nothing at its address and backs off; b comes to a.
            try a.cli.run("peer", "add", b.id, "127.0.0.1:9", "--name", "b")
            try b.cli.run("peer", "add", a.id, a.address)
        }

        // The folder is the first property, so it would go first: its removal then raced the daemons, which
        // were still writing in it, and left it behind in /tmp after every run. The daemons end first.
        deinit { for device in [a, honest] { device.stop(signal: SIGKILL) } }

        /// A write on each side of a–honest arrives within two seconds (milliseconds when idle): their sync does not stall.
        func expectHonestSyncFlows(_ label: String) throws {
            try honest.cli.run("set", "group.test", "from-honest", label)
            let there = try a.await("from-honest", equals: label, timeout: 5)
            try a.cli.run("set", "group.test", "from-a", label)
            let back = try honest.await("from-a", equals: label, timeout: 5)
            #expect(there != nil && there! < 2 && back != nil && back! < 2, "\(label): honest sync took \(String(describing: there)) s and \(String(describing: back)) s\n\(a.log.suffix(2000))")
        }
    }

    @Test func aPairedDeviceMayRelayAnyOriginButCannotStampTheFarFuture() throws {
        let scene = try Scene()
        let peer = try HostilePeer(as: scene.b, to: scene.a)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let honestID = try DeviceID(parsing: scene.honest.id)
        // An entry "written by" the honest device, which never wrote it, and one stamped an hour ahead.
        let forged = Entry(suite: "group.test", key: "forged", value: .string("not written by honest"),
                           version: Version(hlc: HLC(wallMillis: now), origin: honestID))
        let future = Entry(suite: "group.test", key: "future", value: .string("wins forever?"),
                           version: Version(hlc: HLC(wallMillis: now + 3_600_000), origin: peer.device))
        try peer.send(.changes(ChangeBatch(after: 0, through: 2, changes: [Change(sequence: 1, entry: forged), Change(sequence: 2, entry: future)])))
        let acks = try peer.receive(until: { $0.contains { if case .ack(let through) = $0 { through > 0 } else { false } } })
        #expect(acks.contains(.ack(sequence: 1)), "the far-future entry is refused, so the watermark stops before it: \(acks)")
        // Documented: origin is asserted, not proven; a paired device is trusted with the whole store.
        #expect(try scene.honest.await("forged", equals: "not written by honest") != nil, "relayed like any entry")
        let json = try scene.a.cli.run("get", "--json", "group.test", "forged").stdout
        #expect(json.contains(scene.honest.id), "stored with the origin it claims: \(json)")
        #expect(try scene.a.get("future") == nil, "an entry an hour ahead is refused by the drift bound")
        #expect(scene.a.log.contains("event=refused count=1"))
        try scene.expectHonestSyncFlows("after-forgery")
    }

    /// A peer's own words in its error are quoted in the log: they cannot forge a line of it.
    @Test func aPeersErrorTextCannotForgeLogLines() throws {
        let scene = try Scene()
        let peer = try HostilePeer(as: scene.b, to: scene.a)
        try peer.send(.error(.shutdown, "bye\n2026-01-01T00:00:00.000Z event=peer-removed peer=FORGED \"x"))
        _ = try peer.receive(until: { _ in false }, timeout: 1)
        let lines = scene.a.log.split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("2026-01-01T00:00:00.000Z") }, "\(scene.a.log.suffix(1500))")
        #expect(lines.contains { $0.contains("event=session-closed") && $0.contains("FORGED") }, "logged, inside its line")
        try scene.expectHonestSyncFlows("after-forged-log")
    }

    /// Found by review: a peer's text (its closing reason, a key it sent) went whole into the log and `status`,
    /// megabytes per session, and `status` printed it raw, so the peer's escape sequences drove the terminal
    /// and its newlines made lines that looked like status's own.
    @Test func aPeersTextIsCutInTheLogAndStatusAndEscapedOnTheTerminal() throws {
        let scene = try Scene()
        let logBefore = scene.a.log.utf8.count
        var peer = try HostilePeer(as: scene.b, to: scene.a)
        let hugeKey = String(repeating: "k", count: 2_000_000)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let unstorable = Entry(suite: "group.test", key: hugeKey, value: .string("v"), version: Version(hlc: HLC(wallMillis: now), origin: peer.device))
        try peer.send(.changes(ChangeBatch(after: 0, through: 1, changes: [Change(sequence: 1, entry: unstorable)])))
        _ = try peer.receive(until: { $0.contains { if case .ack = $0 { true } else { false } } })
        #expect(scene.a.awaitLog(containing: "event=unstorable-skipped"))
        // a dials b at an address that accepts and never answers, so that its next dial fails only after the
        // handshake's timeout: until then, status shows why the peer's session ended.
        let silent = try SilentListener()
        defer { silent.close() }
        try scene.a.cli.run("peer", "add", scene.b.id, "127.0.0.1:\(silent.port)", "--name", "b")
        peer = try HostilePeer(as: scene.b, to: scene.a)
        let escapes = "\u{1B}]0;TITLE\u{07}\u{1B}[31mRED\r\npeer     FAKE  connected"
        try peer.send(.error(.protocolViolation, escapes + String(repeating: "x", count: 1_000_000)))
        #expect(scene.a.awaitLog(containing: "event=session-closed peer=\(scene.b.id.prefix(7)) reason=\"the peer ended"))
        let grown = scene.a.log.utf8.count - logBefore
        #expect(grown < 20_000, "the log grew by \(grown) bytes")
        #expect(scene.a.log.contains("(2000011 bytes)") && scene.a.log.contains("(1000044 bytes)"), "\(scene.a.log.suffix(3000))")
        var status = try scene.a.cli.run("status").stdout
        for _ in 0..<40 where !status.contains("last error") {  // the session's end is recorded after its log lines
            Thread.sleep(forTimeInterval: 0.05)
            status = try scene.a.cli.run("status").stdout
        }
        #expect(status.utf8.count < 5_000, "status printed \(status.utf8.count) bytes")
        #expect(!status.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x0D }, "\(status)")
        #expect(status.contains("\\u{1B}]0;TITLE\\u{7}") && !status.contains("\npeer     FAKE"), "\(status)\n\(scene.a.log.suffix(3000))")
        let json = try scene.a.status()
        #expect("\(json)".utf8.count < 5_000)
        try scene.expectHonestSyncFlows("after-long-text")
    }

    @Test func anOversizedFrameIsRefusedBeforeAnythingIsAllocated() throws {
        let scene = try Scene()
        let before = try residentMegabytes(scene.a), peakBefore = try peakVirtualMegabytes(scene.a)
        let peer = try HostilePeer(as: scene.b, to: scene.a)
        try peer.connection.writeAll([0xFF, 0xFF, 0xFF, 0xFF, 0x02, 0x00])
        let farewell = try peer.receive(until: { _ in false }, timeout: 5)
        #expect(farewell.contains { if case .error(.malformed, _) = $0 { true } else { false } }, "told why: \(farewell)")
        #expect(peer.closedByPeer, "and disconnected")
        #expect(try residentMegabytes(scene.a) - before < 50, "a 4 GiB announcement allocates nothing")
        // Reserved address space never shows in the resident size; the peak would hold a 4 GiB reservation.
        #expect(try peakVirtualMegabytes(scene.a) - peakBefore < 1024, "nor reserves it")
        let lines = scene.a.log.split(separator: "\n").filter { $0.contains("event=closed") && $0.contains("bad framing") }
        #expect(lines.count == 1, "logged once: \(lines)")
        try scene.expectHonestSyncFlows("after-oversize")
    }

    /// The peer learns why, even with its own bytes still unread on our side: closing a socket with unread
    /// data makes the kernel send a reset, and a reset that arrives first makes the peer drop our `error`.
    @Test func theErrorReachesAPeerWhoseBytesAreStillUnread() throws {
        let scene = try Scene()
        let peer = try HostilePeer(as: scene.b, to: scene.a)
        // A frame announcing more than a frame may hold, then more bytes that a will never read as frames.
        try peer.connection.writeAll([0xFF, 0xFF, 0xFF, 0xFF, 0x02, 0x00] + [UInt8](repeating: 0x55, count: 32 * 1024))
        Thread.sleep(forTimeInterval: 0.05)  // a has read the bad frame and answered by now
        // A peer like the daemon stops at a write that fails, before reading what arrived: a must not reset
        // the connection under it, but let it read why.
        let wrote = (try? peer.send(.ack(sequence: 0))) != nil
        #expect(wrote, "the peer's next write failed: a reset the connection over its unread bytes")
        let farewell = try peer.receive(until: { _ in false }, timeout: 5)
        #expect(farewell.contains { if case .error(.malformed, _) = $0 { true } else { false } }, "told why: \(farewell)")
        #expect(peer.closedByPeer)
        try scene.expectHonestSyncFlows("after-unread-bytes")
    }

    /// One session per paired device: a second connection from the same device replaces the first, which is
    /// told why and closed, and the new one is the session.
    @Test func aSecondConnectionFromTheSameDeviceReplacesTheFirst() throws {
        let scene = try Scene()
        let first = try HostilePeer(as: scene.b, to: scene.a)
        let pid = try #require(scene.a.daemon?.pid)
        let storesWithOneSession = try ProcFS.openFiles(pid, endingWith: "/store.db-writer")
        let second = try HostilePeer(as: scene.b, to: scene.a)
        let farewell = try first.receive(until: { _ in false }, timeout: 5)
        #expect(farewell.contains { if case .goodbye(_, let text) = $0 { text.contains("replaced") } else { false } }, "told why: \(farewell)")
        #expect(first.closedByPeer)
        #expect(scene.a.log.contains("event=duplicate-connection peer=\(scene.b.id.prefix(7)) action=replace-old"), "\(scene.a.log.suffix(1500))")

        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let entry = Entry(suite: "group.test", key: "second", value: .string("v"), version: Version(hlc: HLC(wallMillis: now), origin: second.device))
        try second.send(.changes(ChangeBatch(after: 0, through: 1, changes: [Change(sequence: 1, entry: entry)])))
        let acks = try second.receive(until: { $0.contains(.ack(sequence: 1)) })
        #expect(acks.contains(.ack(sequence: 1)), "\(acks)")
        #expect(try scene.a.get("second") == "v")
        // Found by a soak: the replaced connection, and the store it had open, stayed held for as long as the
        // one that replaced it ran.
        #expect(try ProcFS.openFiles(pid, endingWith: "/store.db-writer") == storesWithOneSession)
        try scene.expectHonestSyncFlows("after-second-connection")
    }

    @Test func replayedFramesAreHarmlessOrEndTheSession() throws {
        let scene = try Scene()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var peer = try HostilePeer(as: scene.b, to: scene.a)
        let entry = Entry(suite: "group.test", key: "replayed", value: .int(1), version: Version(hlc: HLC(wallMillis: now), origin: peer.device))
        let batch = Message.changes(ChangeBatch(after: 0, through: 1, changes: [Change(sequence: 1, entry: entry)]))
        // The same batch twice: merging is idempotent, the second is simply acknowledged again.
        try peer.send(batch)
        try peer.send(batch)
        let acks = try peer.receive(until: { $0.filter { $0 == .ack(sequence: 1) }.count == 2 })
        #expect(acks.filter { $0 == .ack(sequence: 1) }.count == 2, "\(acks)")
        #expect(!peer.closedByPeer)
        #expect(try scene.a.cli.run("list", "group.test").lines.filter { $0 == "replayed" }.count == 1)

        // A replayed hello is a protocol error: the session ends, and says why.
        try peer.send(.hello(peer.helloSent))
        let ended = try peer.receive(until: { _ in false }, timeout: 5)
        #expect(ended.contains { if case .error(.unexpectedMessage, _) = $0 { true } else { false } }, "\(ended)\n\(scene.a.log.suffix(1500))")
        #expect(peer.closedByPeer)

        // A replayed ack (for nothing outstanding) on a new connection ends that session too.
        peer = try HostilePeer(as: scene.b, to: scene.a, resume: Watermark(storeID: peer.peerHello!.storeID, sequence: 0))
        _ = try peer.receive(until: { $0.contains { if case .changes = $0 { true } else { false } } })
        try peer.send(.ack(sequence: 0))
        try peer.send(.ack(sequence: 0))
        let violated = try peer.receive(until: { _ in false }, timeout: 5)
        #expect(violated.contains { if case .error(.protocolViolation, _) = $0 { true } else { false } }, "\(violated)")
        try scene.expectHonestSyncFlows("after-replays")
    }

    /// An entry no store may keep is left out and the rest of its batch is taken: an earlier groupsync with
    /// looser rules may hold one honestly, and refusing the batch stopped that peer's history there for good.
    @Test func anEntryTheStoreRefusesIsLeftOutAndTheRestIsTaken() throws {
        let scene = try Scene()
        let peer = try HostilePeer(as: scene.b, to: scene.a)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        // A key with a control character: no store may keep one.
        let version = Version(hlc: HLC(wallMillis: now), origin: peer.device)
        let bad = Entry(suite: "group.test", key: "bad\u{1}key", value: .int(1), version: version)
        let good = Entry(suite: "group.test", key: "good", value: .int(2), version: version)
        try peer.send(.changes(ChangeBatch(after: 0, through: 2, changes: [Change(sequence: 1, entry: bad), Change(sequence: 2, entry: good)])))
        let answers = try peer.receive(until: { $0.contains(.ack(sequence: 2)) }, timeout: 5)
        #expect(answers.contains(.ack(sequence: 2)), "the watermark moves past it: \(answers)")
        #expect(!peer.closedByPeer)
        let listed = try scene.a.cli.run("list", "group.test").lines
        #expect(listed.contains("good") && listed.allSatisfy { !$0.hasPrefix("bad") }, "\(listed)")
        #expect(scene.a.log.contains("event=unstorable-skipped") && scene.a.log.contains("control character"), "\(scene.a.log.suffix(1500))")
        try scene.expectHonestSyncFlows("after-invalid-entry")
    }

    @Test func aPeerThatNeverReadsIsCutOffAtABoundedQueue() throws {
        let scene = try Scene()
        let peer = try HostilePeer(as: scene.b, to: scene.a)
        // Pings, whose pongs pile up in a's queue while this side reads nothing.
        let pings = (0..<2_000).flatMap { MessageCodec.encode(.ping(millis: Int64($0))) }
        let deadline = Date().addingTimeInterval(60)
        var peak = 0
        // Cut off either way: its queue overflowed (`peer-not-reading`), or, on a machine too busy for this
        // side to fill the queue in time, 30 s passed with nothing read (`write-failed`).
        func cutOff() -> Bool {
            let log = scene.a.log
            return log.contains("event=peer-not-reading") || log.contains("event=write-failed peer=\(peer.device.short)")
        }
        while Date() < deadline, !cutOff() {
            guard (try? peer.connection.writeAll(pings, timeout: .seconds(30))) != nil else { break }
            peak = max(peak, try residentMegabytes(scene.a))
        }
        #expect(cutOff(), "a cut the peer off\n\(scene.a.log.suffix(2000))")
        #expect(peak < 400, "a's memory stayed bounded: peak \(peak) MB")
        print("a peer that never reads: a's resident memory peaked at \(peak) MB before it cut the peer off")
        try scene.expectHonestSyncFlows("after-not-reading")
    }

    @Test func floodsSlowLorisAndStrangersAreBoundedAndLoggedOnce() throws {
        let scene = try Scene()
        let a = scene.a
        // A stranger (a device a never paired) dials again and again.
        let stranger = try TestDevice("stranger", in: scene.folder)
        let strangerContext = try TLSContext(certificate: try stranger.certificate()) { _ in true }
        for _ in 0..<10 {
            if let connection = try? TLSConnection.connect(host: "127.0.0.1", port: a.port, context: strangerContext, timeout: .seconds(5)) {
                _ = try? connection.read(timeout: .seconds(2))  // TLS 1.3: the refusal shows at the first read
                connection.close()
            }
        }
        // Strangers with a new identity for every connection: the device ID in the refusal changes each time.
        for _ in 0..<10 {
            let context = try TLSContext(certificate: try DeviceCertificate.generate()) { _ in true }
            if let connection = try? TLSConnection.connect(host: "127.0.0.1", port: a.port, context: context, timeout: .seconds(5)) {
                _ = try? connection.read(timeout: .seconds(2))
                connection.close()
            }
        }
        // Slow-loris: connections that trickle a TLS ClientHello (which announces 512 bytes) two bytes a second.
        let loris = try (0..<3).map { _ in try LoopbackSocket(port: a.port) }
        let clientHello: [UInt8] = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03] + Array(repeating: 0x42, count: 100)
        // A flood of silent connections, far more than a has handshake slots for.
        var flood: [LoopbackSocket] = []
        for _ in 0..<300 { if let socket = try? LoopbackSocket(port: a.port) { flood.append(socket) } }
        defer { for socket in flood + loris { socket.close() } }

        try scene.expectHonestSyncFlows("under-flood")
        let threads = try threadCount(a)
        #expect(threads < 120, "a holds \(threads) threads under a 300-connection flood")
        let started = Date()
        var lorisOpen = true
        var sent = 0
        while Date().timeIntervalSince(started) < 15 && lorisOpen {
            for socket in loris { socket.send(bytes: [clientHello[sent % clientHello.count]]) }
            sent += 1
            Thread.sleep(forTimeInterval: 0.5)
            lorisOpen = loris.contains { $0.isOpen }
        }
        let lasted = Date().timeIntervalSince(started)
        #expect(!lorisOpen && lasted > 5, "slow-loris connections are cut off by the 10 s handshake timeout (after \(lasted) s)")
        for socket in flood { socket.close() }
        flood = []
        try scene.expectHonestSyncFlows("after-flood")

        let log = a.log.split(separator: "\n")
        let strangerLines = log.filter { $0.contains("event=refused") && $0.contains(String(stranger.id.prefix(7))) }
        #expect(strangerLines.count == 1, "an unpaired device dialing 10 times is logged once: \(strangerLines)")
        let notPaired = log.filter { $0.contains("event=refused") && $0.contains("it is not paired") }
        #expect(notPaired.count == 1, "11 unpaired identities from one host are logged once: \(notPaired)")
        let busyLines = log.filter { $0.contains("too many handshakes in progress") }
        #expect(busyLines.count == 1, "the flood is logged once: \(busyLines.count) lines")
        #expect(a.daemon?.isRunning == true)
    }

    // MARK: Helpers

    private func residentMegabytes(_ device: TestDevice) throws -> Int {
        try procStatus(device, "VmRSS:") / 1024
    }

    private func peakVirtualMegabytes(_ device: TestDevice) throws -> Int {
        try procStatus(device, "VmPeak:") / 1024
    }

    private func threadCount(_ device: TestDevice) throws -> Int { try procStatus(device, "Threads:") }

    private func procStatus(_ device: TestDevice, _ field: String) throws -> Int {
        try ProcFS.statusField(try #require(device.daemon?.pid), field)
    }
}

/// A TCP port on 127.0.0.1 that takes connections (the kernel completes them) and never reads or answers.
final class SilentListener {
    private let fd: Int32
    let port: UInt16

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { Glibc.close(fd); throw FixtureError("cannot listen on 127.0.0.1") }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    func close() { Glibc.close(fd) }
}

/// Speaks the protocol for a device whose identity the test holds, byte by byte, to break its rules.
final class HostilePeer {
    let connection: TLSConnection
    let device: DeviceID
    let helloSent: Hello
    private(set) var peerHello: Hello?
    private(set) var closedByPeer = false
    private var decoder = FrameDecoder()

    init(as me: TestDevice, to target: TestDevice, resume: Watermark? = nil) throws {
        let certificate = try me.certificate()
        device = certificate.deviceID
        let context = try TLSContext(certificate: certificate) { _ in true }
        connection = try TLSConnection.connect(host: "127.0.0.1", port: target.port, context: context,
                                               expectedPeer: try DeviceID(parsing: target.id), timeout: .seconds(5))
        helloSent = Hello(versions: 1...1, deviceName: "hostile", storeID: "hostile-store", physicalMillis: Int64(Date().timeIntervalSince1970 * 1000), resume: resume)
        try connection.writeAll(MessageCodec.encode(.hello(helloSent)))
        let first = try receive(until: { $0.contains { if case .hello = $0 { true } else { false } } })
        for case .hello(let hello) in first { peerHello = hello }
        // Our first batch, empty: a starts reading our history.
        try send(.changes(ChangeBatch(after: 0, through: 0, changes: [])))
    }

    func send(_ message: Message) throws { try connection.writeAll(MessageCodec.encode(message)) }

    /// Reads messages until `done` holds for what arrived so far, the peer closes, or `timeout` passes.
    func receive(until done: ([Message]) -> Bool, timeout: TimeInterval = 5) throws -> [Message] {
        var messages: [Message] = []
        let deadline = Date().addingTimeInterval(timeout)
        while !done(messages), !closedByPeer, Date() < deadline {
            let bytes: [UInt8]
            do {
                bytes = try connection.read(upTo: 1 << 16, timeout: .milliseconds(Int(max(1, deadline.timeIntervalSinceNow * 1000))))
            } catch .readTimedOut {
                break
            } catch {
                closedByPeer = true
                break
            }
            if bytes.isEmpty { closedByPeer = true; break }
            for frame in try decoder.feed(bytes) {
                if let message = try MessageCodec.decode(frame) { messages.append(message) }
            }
        }
        return messages
    }
}

extension TestDevice {
    /// The device's identity, read from its home.
    func certificate() throws -> DeviceCertificate {
        try DeviceCertificate(certificatePEM: try String(contentsOfFile: cli.home + "/cert.pem", encoding: .utf8),
                              privateKeyPEM: try String(contentsOfFile: cli.home + "/key.pem", encoding: .utf8))
    }
}

extension LoopbackSocket {
    func send(bytes: [UInt8]) { _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } }

    /// False once the other end has closed (a zero-byte or failed non-blocking read).
    var isOpen: Bool {
        var byte: UInt8 = 0
        let n = recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
        if n == 0 { return false }
        if n < 0 { return errno == EAGAIN || errno == EWOULDBLOCK }
        return true
    }
}
