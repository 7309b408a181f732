import Glibc
import COpenSSL
import GroupSyncCore

/// An authenticated, encrypted connection to a paired device.
///
/// Blocking API meant for a thread per connection: one thread may read while another writes; `shutdown()` and
/// `close()` may be called from any thread and wake both. Every wait has a deadline, so no peer can hold a
/// thread longer than the timeout the caller chose. End a connection with `close()`: dropping the last reference
/// also releases the socket, but without a TLS goodbye, so the peer sees `connectionLost` instead of a clean end.
public final class TLSConnection: Sendable {
    /// The device on the other end, proven by the handshake (it holds that certificate's private key).
    public let peerID: DeviceID
    /// This device's ID, as the peer sees it.
    public let localDeviceID: DeviceID
    /// The peer's numeric address and port, for logs ("192.0.2.7:22000", "[::1]:22000").
    public let remoteAddress: String
    private let session: SSLSession

    private init(peerID: DeviceID, localDeviceID: DeviceID, remoteAddress: String, session: SSLSession) {
        self.peerID = peerID
        self.localDeviceID = localDeviceID
        self.remoteAddress = remoteAddress
        self.session = session
    }

    deinit {
        session.socket.close()
    }

    /// Dials a device and authenticates it. `timeout` bounds the TCP connect and the TLS handshake together
    /// (name resolution is not covered: getaddrinfo cannot be interrupted). Each address the host resolves to is
    /// tried in turn until one connects and proves to be the device (`connect(to:)`).
    ///
    /// The server's device ID must pass `context`'s `isAllowed` and, when `expectedPeer` is given, equal it.
    /// Note TLS 1.3: if the *server* refuses our certificate, this call still succeeds, because the server's verdict
    /// arrives after the client's last handshake message; it then shows as `TransportError.refusedByPeer` at the first
    /// `read`. A protocol should therefore begin with the server speaking (or the client waiting for an answer).
    public static func connect(host: String, port: UInt16, context: TLSContext, expectedPeer: DeviceID? = nil,
                               timeout: Duration = .seconds(10)) throws(TransportError) -> TLSConnection {
        let addresses = try SocketSupport.resolve(host: host, port: port, passive: false)
        return try connect(to: addresses, host: host, port: port, context: context, expectedPeer: expectedPeer, timeout: timeout)
    }

    /// The addresses a host resolved to, tried in order. Each gets an equal share of the time still left, so
    /// that one that silently drops packets (an IPv6 route that leads nowhere, a network the peer has left)
    /// cannot use up the time of those after it; and one where the handshake fails (an old address where
    /// another machine now answers) moves on to the next as well. When there are several, an error names the
    /// address it came from. Found by review: a name whose first address dropped packets never reached the
    /// working second one.
    static func connect(to addresses: [SocketSupport.Address], host: String, port: UInt16, context: TLSContext,
                        expectedPeer: DeviceID?, timeout: Duration) throws(TransportError) -> TLSConnection {
        let deadline = ContinuousClock.now + timeout
        var lastError = TransportError.connectFailed(host: host, port: port, detail: "no address to try")
        for (index, address) in addresses.enumerated() {
            let named = addresses.count > 1 ? "\(host) (address \(address.text))" : host
            let share = (deadline - ContinuousClock.now) / (addresses.count - index)
            guard share > .zero else { break }
            let fd = SocketSupport.makeSocket(family: address.family)
            guard fd >= 0 else {
                lastError = .connectFailed(host: named, port: port, detail: SocketSupport.errnoText())
                continue
            }
            let socket = SocketHandle(fd: fd)
            SocketSupport.setNonBlocking(fd)
            guard SocketSupport.startConnect(fd, address) else {
                lastError = .connectFailed(host: named, port: port, detail: SocketSupport.errnoText())
                socket.close()
                continue
            }
            if SocketSupport.wait(fd, forWriting: true, until: ContinuousClock.now + share) == .timedOut {
                lastError = .connectTimedOut(host: named, port: port, after: addresses.count > 1 ? share : timeout)
                socket.close()
                continue
            }
            let status = SocketSupport.pendingError(fd)
            guard status == 0 else {
                lastError = .connectFailed(host: named, port: port, detail: SocketSupport.errnoText(status))
                socket.close()
                continue
            }
            SocketSupport.setNoDelay(fd)
            do {
                return try handshake(socket: socket, remoteAddress: address.text, context: context, role: .client,
                                     expectedPeer: expectedPeer, timeout: timeout, deadline: deadline)
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    /// Runs the TLS handshake on a connected socket, which it takes over: on failure the socket is closed.
    static func handshake(socket: SocketHandle, remoteAddress: String, context: TLSContext, role: SSLSession.Role,
                          expectedPeer: DeviceID?, timeout: Duration,
                          deadline: ContinuousClock.Instant) throws(TransportError) -> TLSConnection {
        let session: SSLSession
        do {
            session = try SSLSession(context: context, socket: socket, role: role, expectedPeer: expectedPeer)
        } catch {
            socket.close()
            throw error
        }
        let failure: TransportError
        switch session.perform(until: deadline, { SSL_do_handshake($0) }) {
        case .completed:
            // Belt and braces: the certificate the handshake ended with must be the one the callback accepted.
            guard let id = session.peerDeviceID(), id == session.verification.accepted else {
                socket.close()
                throw session.verification.refusal ?? .peerPresentedNoCertificate
            }
            return TLSConnection(peerID: id, localDeviceID: context.localDeviceID, remoteAddress: remoteAddress,
                                 session: session)
        case .timedOut:
            socket.close()
            throw .handshakeTimedOut(after: timeout)
        case .closedLocally:
            socket.close()
            throw .connectionClosedLocally
        case .closedByPeer:
            failure = .handshakeFailed(detail: "the peer closed the connection during the handshake")
        case .failed(let details):
            // Our own refusal (with the device ID it concerns) explains more than OpenSSL's "verify failed".
            failure = session.verification.refusal
                ?? details.transportError(phase: .handshake, ourDeviceID: context.localDeviceID)
        }
        socket.closeAfterDraining(for: .milliseconds(100))
        throw failure
    }

    /// Reads what is available, up to `maxCount` bytes, waiting at most `timeout` (nil: until data arrives, the
    /// peer closes, or `shutdown()` is called). Returns an empty array when the peer ended the stream cleanly.
    /// A read timeout leaves the connection usable; every other error means it is finished.
    public func read(upTo maxCount: Int = 16 * 1024, timeout: Duration? = nil) throws(TransportError) -> [UInt8] {
        precondition(maxCount > 0, "read(upTo:) needs room for at least one byte")
        let deadline = timeout.map { ContinuousClock.now + $0 }
        var buffer = [UInt8](repeating: 0, count: maxCount)
        let outcome = buffer.withUnsafeMutableBytes { raw in
            session.perform(until: deadline) { SSL_read($0, raw.baseAddress, Int32(clamping: raw.count)) }
        }
        switch outcome {
        case .completed(let count):
            buffer.removeSubrange(Int(count)...)
            return buffer
        case .closedByPeer:
            return []
        case .timedOut:
            throw .readTimedOut(after: timeout ?? .zero)
        case .closedLocally:
            throw .connectionClosedLocally
        case .failed(let details):
            throw details.transportError(phase: .transfer, ourDeviceID: localDeviceID)
        }
    }

    /// Reads exactly `count` bytes (e.g. a length-prefixed frame), all within `timeout`.
    /// A clean end of stream before `count` bytes is reported as `connectionLost`.
    public func readExactly(_ count: Int, timeout: Duration? = nil) throws(TransportError) -> [UInt8] {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        var result: [UInt8] = []
        result.reserveCapacity(count)
        while result.count < count {
            let remaining = deadline.map { max(.zero, $0 - .now) }
            let chunk: [UInt8]
            do {
                chunk = try read(upTo: count - result.count, timeout: remaining)
            } catch .readTimedOut {
                throw .readTimedOut(after: timeout ?? .zero)
            }
            guard !chunk.isEmpty else {
                throw .connectionLost(detail: "the peer ended the stream after \(result.count) of \(count) bytes")
            }
            result += chunk
        }
        return result
    }

    /// Writes all of `bytes`, waiting at most `timeout` in total for the peer to take them.
    /// After a failure or a timeout the connection is shut down: a partly written TLS record cannot be resumed.
    public func writeAll(_ bytes: [UInt8], timeout: Duration = .seconds(30)) throws(TransportError) {
        let deadline = ContinuousClock.now + timeout
        var offset = 0
        while offset < bytes.count {
            let outcome = bytes.withUnsafeBytes { raw in
                session.perform(until: deadline) {
                    SSL_write($0, raw.baseAddress! + offset, Int32(clamping: raw.count - offset))
                }
            }
            switch outcome {
            case .completed(let count):
                offset += Int(count)
            case .timedOut:
                session.socket.shutdown()
                throw .writeTimedOut(after: timeout)
            case .closedLocally:
                throw .connectionClosedLocally
            case .closedByPeer:
                session.socket.shutdown()
                throw .connectionLost(detail: "the peer closed the connection")
            case .failed(let details):
                session.socket.shutdown()
                throw details.transportError(phase: .transfer, ourDeviceID: localDeviceID)
            }
        }
    }

    /// Whether `count` more bytes (plus TLS record overhead) fit in the socket's send buffer now, so that
    /// `writeAll` of them will not wait for the peer. Lets a caller that must not block (it holds a lock the
    /// reader needs) write a small frame itself instead of handing it to a writer thread.
    public func hasRoomToWrite(_ count: Int) -> Bool {
        guard let fd = try? session.socket.acquire() else { return false }
        defer { session.socket.release() }
        var unsent: Int32 = 0
        var capacity: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard ioctl(fd, UInt(TIOCOUTQ), &unsent) == 0,
              getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &capacity, &length) == 0 else { return false }
        // The kernel counts its own bookkeeping in SO_SNDBUF (it reports twice what was asked): keep to half.
        return Int(unsent) + count + Self.recordOverheadBytes <= Int(capacity) / 2
    }

    /// A generous bound on what TLS adds to a write of up to one record (header, tag, padding).
    static let recordOverheadBytes = 1024

    /// Shuts the socket down in both directions without releasing it. Any thread blocked in `read` or `writeAll`
    /// returns with `connectionClosedLocally`. Use it to stop a connection's reader thread from elsewhere.
    public func shutdown() {
        session.socket.shutdown()
    }

    /// Says goodbye (TLS close_notify, if the socket takes it without waiting) and closes the socket.
    /// Safe from any thread; the descriptor is released once no other thread is using it.
    public func close() {
        session.sendCloseNotify()
        session.socket.close()
    }

    /// `close`, for a connection nobody reads any more: half-closes, reads and drops what the peer still sends
    /// (briefly, and at most 64 KiB), then closes. Closing over unread bytes makes the kernel send a reset,
    /// and a peer whose write then fails may stop before reading the frames we sent last.
    public func closeAfterDraining() {
        session.sendCloseNotify()
        session.socket.closeAfterDraining(for: .milliseconds(200))
    }
}
