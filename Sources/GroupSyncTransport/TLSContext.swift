import COpenSSL
import GroupSyncCore

/// This device's TLS configuration: TLS 1.3 only, presents our certificate, demands the peer's, and accepts a peer
/// only if `isAllowed` says so for its device ID. One context serves any number of connections, listening and dialling.
///
/// `isAllowed` is consulted at every handshake (session resumption is disabled, so no handshake skips it): removing
/// a peer from the allow-list refuses its next connection. It runs on the handshaking thread, possibly several at
/// once, so it must be thread-safe and quick (look up a locked set; do no I/O).
public final class TLSContext: @unchecked Sendable {
    // @unchecked: the SSL_CTX is configured once in init and only read afterwards; OpenSSL allows creating
    // connections from one SSL_CTX on many threads at once.
    let sslContext: OpaquePointer
    let isAllowed: @Sendable (DeviceID) -> Bool
    public let certificate: DeviceCertificate

    /// Our own device ID, e.g. to tell the user what to pair on the other side.
    public var localDeviceID: DeviceID { certificate.deviceID }

    public init(certificate: DeviceCertificate,
                isAllowed: @escaping @Sendable (DeviceID) -> Bool) throws(TransportError) {
        Transport.ignoreSIGPIPE()
        ERR_clear_error()
        guard let ctx = SSL_CTX_new(TLS_method()) else {
            throw .tlsSetupFailed(detail: OpenSSLSupport.drainErrors())
        }
        // From here on, a failure must free ctx; deinit does not run for a failed init.
        func fail(_ step: String) -> TransportError {
            SSL_CTX_free(ctx)
            return .tlsSetupFailed(detail: "\(step): \(OpenSSLSupport.drainErrors())")
        }
        guard gs_SSL_CTX_set_tls13_only(ctx) == 1 else { throw fail("TLS 1.3") }
        guard gs_SSL_CTX_offer_only_ed25519_and_x25519(ctx) == 1 else { throw fail("Ed25519 and X25519") }
        gs_SSL_CTX_disable_resumption(ctx)

        let cert: OpaquePointer, key: OpaquePointer
        do {
            cert = try OpenSSLSupport.parseCertificate(pem: certificate.certificatePEM)
            key = try OpenSSLSupport.parsePrivateKey(pem: certificate.privateKeyPEM)
        } catch {
            // Unreachable for a DeviceCertificate, which was parsed when it was made; handled anyway.
            SSL_CTX_free(ctx)
            throw .tlsSetupFailed(detail: "\(error)")
        }
        // SSL_CTX_use_* take their own references, so ours are released right away.
        let usedCert = SSL_CTX_use_certificate(ctx, cert)
        let usedKey = SSL_CTX_use_PrivateKey(ctx, key)
        X509_free(cert)
        EVP_PKEY_free(key)
        guard usedCert == 1, usedKey == 1, SSL_CTX_check_private_key(ctx) == 1 else { throw fail("certificate") }

        // Both sides verify: the server requests a certificate and fails the handshake when none comes.
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, PeerVerification.callback)

        self.sslContext = ctx
        self.isAllowed = isAllowed
        self.certificate = certificate
    }

    deinit {
        SSL_CTX_free(sslContext)
    }
}
