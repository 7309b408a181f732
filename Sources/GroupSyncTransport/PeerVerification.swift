import COpenSSL
import GroupSyncCore

/// The pinning decision for one handshake, reachable from OpenSSL's verify callback.
///
/// Why per connection rather than per `SSL_CTX`: a client dialling a specific device also checks `expectedPeer`,
/// and the callback records which device ID was presented so a refusal can name it in the error message.
/// OpenSSL calls the callback on the thread running the handshake, and the fields are read afterwards on that same
/// thread, so no lock is needed.
final class PeerVerification: @unchecked Sendable {
    let isAllowed: @Sendable (DeviceID) -> Bool
    let expectedPeer: DeviceID?
    /// The leaf certificate's device ID, once the callback has seen it.
    private(set) var presented: DeviceID?
    /// The device ID the callback accepted, if any.
    private(set) var accepted: DeviceID?
    /// Why the callback refused the peer, if it did.
    private(set) var refusal: TransportError?

    init(isAllowed: @escaping @Sendable (DeviceID) -> Bool, expectedPeer: DeviceID?) {
        self.isAllowed = isAllowed
        self.expectedPeer = expectedPeer
    }

    func decide(_ id: DeviceID) -> Bool {
        presented = id
        if let expectedPeer, id != expectedPeer {
            refusal = .unexpectedPeer(expected: expectedPeer, presented: id)
            return false
        }
        guard isAllowed(id) else {
            refusal = .peerNotAllowed(id)
            return false
        }
        accepted = id
        return true
    }

    /// Where an `SSL` object keeps its (unretained) pointer to this object; the owner keeps it alive.
    static let exDataIndex: Int32 = gs_SSL_get_ex_new_index()

    func attach(to ssl: OpaquePointer) -> Bool {
        SSL_set_ex_data(ssl, Self.exDataIndex, Unmanaged.passUnretained(self).toOpaque()) == 1
    }

    /// OpenSSL's verify callback: it must be a C function pointer, so it captures nothing and finds the
    /// `PeerVerification` through the `SSL` object's ex_data.
    ///
    /// Trust is by pinning: the only question is whether the leaf certificate's fingerprint is a paired device.
    /// OpenSSL's own verdict (always "self-signed" for our certificates, maybe "expired") is ignored, and any chain
    /// certificates a peer sends (depth > 0) mean nothing. The leaf is the one whose key signs the handshake, so
    /// accepting it proves the peer holds that device's private key.
    static let callback: @convention(c) (Int32, OpaquePointer?) -> Int32 = { _, store in
        guard let store else { return 0 }
        if X509_STORE_CTX_get_error_depth(store) > 0 { return 1 }
        guard let ssl = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()),
              let raw = SSL_get_ex_data(OpaquePointer(ssl), exDataIndex),
              let certificate = X509_STORE_CTX_get_current_cert(store),
              let id = OpenSSLSupport.deviceID(of: certificate)
        else {
            X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION)
            return 0
        }
        let verification = Unmanaged<PeerVerification>.fromOpaque(raw).takeUnretainedValue()
        if verification.decide(id) { return 1 }
        // "Certificate rejected" makes OpenSSL send a bad_certificate alert, which the peer reports as a refusal
        // ("pair this device"). A device that is paired but not the one dialed must not be told that: it gets
        // certificate_unknown, the alert OpenSSL sends for a verify error it has no other alert for.
        if case .unexpectedPeer? = verification.refusal {
            X509_STORE_CTX_set_error(store, X509_V_ERR_SUBJECT_ISSUER_MISMATCH)
        } else {
            X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REJECTED)
        }
        return 0
    }
}
