import COpenSSL
import Glibc
import GroupSyncCore
import Synchronization

/// Owns one OpenSSL `SSL` object on a non-blocking socket and drives its calls to completion.
///
/// Why non-blocking plus `poll`, although the public API blocks: OpenSSL forbids using one `SSL` object from two
/// threads at once, yet a sync connection wants one thread reading while another writes. Each SSL call therefore runs
/// under a lock but never blocks inside it; the waiting for the socket happens in `poll` outside the lock. The same
/// loop gives exact deadlines: a peer trickling one byte at a time cannot stretch a handshake or a read.
final class SSLSession: @unchecked Sendable {
    // @unchecked: `ssl` is only touched under `lock`; the other properties are immutable or thread-safe.
    private let ssl: OpaquePointer
    let socket: SocketHandle
    let verification: PeerVerification
    private let lock = Mutex<Void>(())

    enum Role { case client, server }

    /// What an SSL call that failed left behind, captured right after the call on the same thread
    /// (errno and the OpenSSL error queue are per thread).
    struct Failure {
        var sslError: Int32
        var systemErrno: Int32
        var errorCodes: [UInt]
    }

    enum Outcome {
        case completed(Int32)
        /// The peer ended the TLS stream cleanly (close_notify).
        case closedByPeer
        case timedOut
        /// `shutdown()`/`close()` was called on our side.
        case closedLocally
        case failed(Failure)
    }

    init(context: TLSContext, socket: SocketHandle, role: Role, expectedPeer: DeviceID?) throws(TransportError) {
        let fd = try socket.acquire()
        defer { socket.release() }
        ERR_clear_error()
        guard let ssl = SSL_new(context.sslContext) else {
            throw .tlsSetupFailed(detail: OpenSSLSupport.drainErrors())
        }
        let verification = PeerVerification(isAllowed: context.isAllowed, expectedPeer: expectedPeer)
        guard verification.attach(to: ssl), SSL_set_fd(ssl, fd) == 1 else {
            SSL_free(ssl)
            throw .tlsSetupFailed(detail: OpenSSLSupport.drainErrors())
        }
        gs_SSL_set_retry_friendly_modes(ssl)
        switch role {
        case .client: SSL_set_connect_state(ssl)
        case .server: SSL_set_accept_state(ssl)
        }
        SocketSupport.setNonBlocking(fd)
        self.ssl = ssl
        self.socket = socket
        self.verification = verification
    }

    deinit {
        SSL_free(ssl)
    }

    /// Repeats the non-blocking `operation` until it succeeds, fails, or the deadline passes (nil: no deadline).
    func perform(until deadline: ContinuousClock.Instant?, _ operation: (OpaquePointer) -> Int32) -> Outcome {
        guard let fd = try? socket.acquire() else { return .closedLocally }
        defer { socket.release() }
        while true {
            let (result, sslError, systemErrno, codes) = lock.withLock { _ -> (Int32, Int32, Int32, [UInt]) in
                ERR_clear_error()
                errno = 0
                let result = operation(ssl)
                if result > 0 { return (result, SSL_ERROR_NONE, 0, []) }
                let sslError = SSL_get_error(ssl, result)
                let systemErrno = errno
                var codes: [UInt] = []
                while case let code = ERR_get_error(), code != 0 { codes.append(code) }
                return (result, sslError, systemErrno, codes)
            }
            switch sslError {
            case SSL_ERROR_NONE:
                return .completed(result)
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                if socket.isShutDown { return .closedLocally }
                let forWriting = sslError == SSL_ERROR_WANT_WRITE
                if SocketSupport.wait(fd, forWriting: forWriting, until: deadline) == .timedOut { return .timedOut }
            case SSL_ERROR_ZERO_RETURN:
                return .closedByPeer
            default:
                if socket.isShutDown { return .closedLocally }
                return .failed(Failure(sslError: sslError, systemErrno: systemErrno, errorCodes: codes))
            }
        }
    }

    /// The device ID of the certificate the peer presented in the completed handshake.
    func peerDeviceID() -> DeviceID? {
        lock.withLock { _ -> DeviceID? in
            guard let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
            defer { X509_free(certificate) }
            return OpenSSLSupport.deviceID(of: certificate)
        }
    }

    /// Sends a TLS close_notify if the socket takes it right away, so the peer sees a clean end of stream rather
    /// than a lost connection. Never waits: closing must not hang on a peer that stopped reading.
    func sendCloseNotify() {
        guard !socket.isShutDown, let _ = try? socket.acquire() else { return }
        defer { socket.release() }
        lock.withLock { _ in
            ERR_clear_error()
            _ = SSL_shutdown(ssl)
            ERR_clear_error()
        }
    }
}

extension SSLSession.Failure {
    enum Phase { case handshake, transfer }

    /// TLS alerts a peer sends when it does not accept our certificate. OpenSSL reports a *received* alert as
    /// error reason 1000 + the alert number.
    private static let certificateRefusalAlerts: Set<Int32> = [
        40,  // handshake_failure
        42,  // bad_certificate
        43,  // unsupported_certificate
        44,  // certificate_revoked
        45,  // certificate_expired
        46,  // certificate_unknown (but see `dialedForAnotherDevice`)
        48,  // unknown_ca
        49,  // access_denied
        116,  // certificate_required
    ]

    /// Turns OpenSSL's error state into a message that names the likely cause.
    func transportError(phase: Phase, ourDeviceID: DeviceID) -> TransportError {
        let reasons = errorCodes.map { Int32(ERR_GET_REASON($0)) }
        let texts = errorCodes.map(OpenSSLSupport.reasonText)

        if let index = reasons.firstIndex(where: { $0 >= SSL_AD_REASON_OFFSET && $0 < SSL_AD_REASON_OFFSET + 256 }) {
            let alert = reasons[index] - SSL_AD_REASON_OFFSET
            if alert == SSL_AD_CERTIFICATE_UNKNOWN {
                return .dialedForAnotherDevice(alert: texts[index], ourDeviceID: ourDeviceID)
            }
            if Self.certificateRefusalAlerts.contains(alert) {
                return .refusedByPeer(alert: texts[index], ourDeviceID: ourDeviceID)
            }
            let detail = "the peer sent a TLS alert: \(texts[index])"
            return phase == .handshake ? .handshakeFailed(detail: detail) : .connectionLost(detail: detail)
        }
        if reasons.contains(SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE) {
            return .peerPresentedNoCertificate
        }
        let peerClosed = reasons.contains(SSL_R_UNEXPECTED_EOF_WHILE_READING)
            || (sslError == SSL_ERROR_SYSCALL && systemErrno == 0)
        if peerClosed {
            return phase == .handshake
                ? .handshakeFailed(detail: "the peer closed the connection during the handshake")
                : .connectionLost(detail: "the peer closed the connection without a TLS close_notify")
        }
        if sslError == SSL_ERROR_SYSCALL {
            let detail = SocketSupport.errnoText(systemErrno)
            return phase == .handshake ? .handshakeFailed(detail: detail) : .connectionLost(detail: detail)
        }
        let detail = texts.isEmpty ? "OpenSSL error \(sslError)" : texts.joined(separator: "; ")
        return phase == .handshake ? .handshakeFailed(detail: detail) : .ioFailed(detail: detail)
    }
}
