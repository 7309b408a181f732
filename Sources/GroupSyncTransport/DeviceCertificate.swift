import COpenSSL
import GroupSyncCore

/// A device's long-term identity: a self-signed certificate and its private key, both as PEM text.
///
/// Peers trust each other by pinning the SHA-256 fingerprint of the certificate (the `DeviceID`), as Syncthing
/// does, so nothing here depends on a certificate authority, host names or expiry dates. The PEM texts are what
/// gets stored on disk; the private key is unencrypted, so whoever stores it must keep the file private (0600).
public struct DeviceCertificate: Sendable, Equatable {
    public let certificatePEM: String
    public let privateKeyPEM: String
    /// SHA-256 of the certificate's DER encoding (== `openssl x509 -noout -fingerprint -sha256`).
    public let deviceID: DeviceID

    /// How long a generated certificate is valid. Expiry is never checked (trust is by pinning), but other TLS
    /// tooling looks at it, so choose a span longer than any device lives.
    static let validitySeconds = 20 * 365 * 24 * 60 * 60

    /// Creates a new Ed25519 key and a self-signed X.509 v3 certificate for it with a random serial number.
    /// Ed25519 keeps certificates small and key generation fast, and TLS 1.3 supports it everywhere OpenSSL 3 runs.
    public static func generate(commonName: String = "groupsync") throws(TransportError) -> DeviceCertificate {
        ERR_clear_error()
        func failure(_ step: String) -> TransportError {
            .certificateGenerationFailed(detail: "\(step): \(OpenSSLSupport.drainErrors())")
        }

        // Key.
        guard let keyContext = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nil) else { throw failure("key context") }
        defer { EVP_PKEY_CTX_free(keyContext) }
        var generatedKey: OpaquePointer? = nil
        guard EVP_PKEY_keygen_init(keyContext) == 1, EVP_PKEY_keygen(keyContext, &generatedKey) == 1,
              let key = generatedKey else { throw failure("Ed25519 key generation") }
        defer { EVP_PKEY_free(key) }

        // Certificate.
        guard let cert = X509_new() else { throw failure("certificate allocation") }
        defer { X509_free(cert) }
        guard X509_set_version(cert, Int(X509_VERSION_3)) == 1 else { throw failure("version") }

        // Random positive 63-bit serial: RFC 5280 wants serials unique per issuer, and every device is its own issuer,
        // but a random one keeps two certificates generated in the same second apart in tools that compare serials.
        var rng = SystemRandomNumberGenerator()
        let serial = UInt64.random(in: 1...UInt64(Int64.max), using: &rng)
        guard ASN1_INTEGER_set_uint64(X509_get_serialNumber(cert), serial) == 1 else { throw failure("serial number") }

        // Start a day early so a peer whose clock runs behind does not see a "not yet valid" certificate.
        guard X509_gmtime_adj(X509_getm_notBefore(cert), -24 * 60 * 60) != nil,
              X509_gmtime_adj(X509_getm_notAfter(cert), validitySeconds) != nil else { throw failure("validity") }

        guard let name = X509_get_subject_name(cert),
              X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, commonName, -1, -1, 0) == 1,
              X509_set_issuer_name(cert, name) == 1 else { throw failure("subject name") }
        guard X509_set_pubkey(cert, key) == 1 else { throw failure("public key") }

        // The usual extensions of a TLS client-and-server leaf certificate, so standard tools accept it for both roles.
        let extensions: [(Int32, String)] = [
            (NID_basic_constraints, "critical,CA:FALSE"),
            (NID_key_usage, "critical,digitalSignature"),
            (NID_ext_key_usage, "serverAuth,clientAuth"),
            (NID_subject_key_identifier, "hash"),
        ]
        for (nid, value) in extensions {
            guard gs_X509_add_extension_text(cert, nid, value) == 1 else { throw failure("extension \(value)") }
        }

        // Ed25519 signs the whole message itself, so no separate digest is passed.
        guard X509_sign(cert, key, nil) > 0 else { throw failure("signing") }

        guard let certificatePEM = OpenSSLSupport.text(writtenBy: { PEM_write_bio_X509($0, cert) }) else {
            throw failure("certificate encoding")
        }
        guard let privateKeyPEM = OpenSSLSupport.text(writtenBy: {
            PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil)
        }) else { throw failure("key encoding") }
        return try DeviceCertificate(certificatePEM: certificatePEM, privateKeyPEM: privateKeyPEM)
    }

    /// Loads a stored identity: parses both PEM texts, checks that the key is Ed25519, the certificate's
    /// self-signature and that the key belongs to the certificate, and computes the device ID. Only Ed25519:
    /// the TLS context offers no other signature algorithm (`TLSContext`), so an identity with another key (an
    /// ECDSA certificate made by another tool) would load, print an ID, and then fail every handshake with a
    /// misleading "not paired" on one side and "no certificate" on the other.
    public init(certificatePEM: String, privateKeyPEM: String) throws(TransportError) {
        let cert = try OpenSSLSupport.parseCertificate(pem: certificatePEM)
        defer { X509_free(cert) }
        let key = try OpenSSLSupport.parsePrivateKey(pem: privateKeyPEM)
        defer { EVP_PKEY_free(key) }
        guard EVP_PKEY_get_id(key) == EVP_PKEY_ED25519 else {
            throw .notAPEMPrivateKey(detail: "it is not an Ed25519 key, the only kind a GroupSync identity uses")
        }

        ERR_clear_error()
        guard let publicKey = X509_get0_pubkey(cert) else {
            throw .notAPEMCertificate(detail: "the certificate carries no usable public key")
        }
        guard EVP_PKEY_eq(publicKey, key) == 1 else {
            ERR_clear_error()
            throw .keyDoesNotMatchCertificate
        }
        guard X509_verify(cert, publicKey) == 1 else {
            ERR_clear_error()
            throw .certificateSignatureInvalid
        }
        guard let id = OpenSSLSupport.deviceID(of: cert) else {
            throw .notAPEMCertificate(detail: "cannot compute its fingerprint: \(OpenSSLSupport.drainErrors())")
        }
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
        self.deviceID = id
    }
}
