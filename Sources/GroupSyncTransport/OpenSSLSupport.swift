import COpenSSL
import GroupSyncCore

/// Small helpers around OpenSSL's C API, so the rest of the module does not juggle raw buffers.
/// All OpenSSL objects are `OpaquePointer`s here; ownership stays with the caller.
enum OpenSSLSupport {
    /// Drains this thread's OpenSSL error queue into one readable line.
    /// The queue is per thread and must be emptied, or a stale entry gets blamed for the next failure.
    static func drainErrors(fallback: String = "unknown OpenSSL error") -> String {
        var messages: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            messages.append(reasonText(code))
        }
        return messages.isEmpty ? fallback : messages.joined(separator: "; ")
    }

    /// The reason part of an OpenSSL error code ("wrong version number"), falling back to the full string.
    static func reasonText(_ code: UInt) -> String {
        if let reason = ERR_reason_error_string(code) {
            return String(cString: reason)
        }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Runs `write` against a fresh memory BIO and returns what it wrote as text.
    static func text(writtenBy write: (OpaquePointer) -> Int32) -> String? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { return nil }
        var data: UnsafeMutablePointer<CChar>? = nil
        let length = gs_BIO_get_mem_data(bio, &data)
        guard length > 0, let data else { return nil }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    /// Hands `read` a memory BIO holding a copy of `text`.
    /// BIO_new_mem_buf would not copy, and Swift's string storage may be gone before OpenSSL reads it.
    static func withBIO<R>(containing text: String, _ read: (OpaquePointer) -> R?) -> R? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return nil }
        let written = bytes.withUnsafeBytes { BIO_write(bio, $0.baseAddress, Int32($0.count)) }
        guard written == Int32(bytes.count) else { return nil }
        return read(bio)
    }

    /// SHA-256 of the certificate's DER encoding: the same value as `openssl x509 -fingerprint -sha256`.
    static func deviceID(of certificate: OpaquePointer) -> DeviceID? {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, EVP_sha256(), &digest, &length) == 1, length == 32 else { return nil }
        return try? DeviceID(bytes: Array(digest.prefix(Int(length))))
    }

    /// Parses the first certificate in a PEM text. The caller frees the result with X509_free.
    static func parseCertificate(pem: String) throws(TransportError) -> OpaquePointer {
        ERR_clear_error()
        guard pem.contains("-----BEGIN") else {
            throw .notAPEMCertificate(detail: "no PEM header found")
        }
        guard let cert = withBIO(containing: pem, { PEM_read_bio_X509($0, nil, nil, nil) }) else {
            throw .notAPEMCertificate(detail: drainErrors(fallback: "unreadable"))
        }
        return cert
    }

    /// Parses an unencrypted PEM private key. The caller frees the result with EVP_PKEY_free.
    static func parsePrivateKey(pem: String) throws(TransportError) -> OpaquePointer {
        ERR_clear_error()
        guard pem.contains("-----BEGIN") else {
            throw .notAPEMPrivateKey(detail: "no PEM header found")
        }
        // An empty passphrase callback result means an encrypted key fails instead of prompting on the terminal.
        let key = withBIO(containing: pem) { bio in
            PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)
        }
        guard let key else {
            throw .notAPEMPrivateKey(detail: drainErrors(fallback: "unreadable"))
        }
        return key
    }
}
