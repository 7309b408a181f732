import Glibc
import GroupSyncCore

/// Everything that can go wrong in the transport, each case with a message that says what happened
/// and, where the user can act, what to do. Messages go straight into logs and CLI output.
public enum TransportError: Error, Equatable, Sendable, CustomStringConvertible {
    // Certificates and keys.
    case notAPEMCertificate(detail: String)
    case notAPEMPrivateKey(detail: String)
    case keyDoesNotMatchCertificate
    case certificateSignatureInvalid
    case certificateGenerationFailed(detail: String)

    // TLS set-up.
    case tlsSetupFailed(detail: String)

    // Peer authentication.
    /// The peer proved it holds this device ID's key, but that device is not paired with us.
    case peerNotAllowed(DeviceID)
    /// We dialled a specific device and a different (though maybe paired) device answered.
    case unexpectedPeer(expected: DeviceID, presented: DeviceID)
    case peerPresentedNoCertificate
    /// The peer aborted the handshake or the first read with a TLS alert: usually it does not know our device ID.
    case refusedByPeer(alert: String, ourDeviceID: DeviceID)
    /// The peer dialed this device's address for another device, and hung up on finding this one: one of its
    /// peers' stored addresses leads here (certificate_unknown, which GroupSync sends for exactly that).
    case dialedForAnotherDevice(alert: String, ourDeviceID: DeviceID)
    case handshakeFailed(detail: String)
    case handshakeTimedOut(after: Duration)

    // Sockets.
    case addressResolutionFailed(host: String, detail: String)
    /// The name service could not answer now (EAI_AGAIN: no network yet, a resolver down): unlike a name that
    /// does not resolve, worth trying again later.
    case addressResolutionUnavailable(host: String, detail: String)
    case connectFailed(host: String, port: UInt16, detail: String)
    case connectTimedOut(host: String, port: UInt16, after: Duration)
    case bindFailed(host: String, port: UInt16, detail: String)
    case acceptFailed(detail: String)
    case listenerClosed

    // Data transfer.
    case readTimedOut(after: Duration)
    case writeTimedOut(after: Duration)
    /// The peer went away without a TLS close_notify: a crash, a reset or a cut network.
    case connectionLost(detail: String)
    /// `close()` or `shutdown()` was called on this connection, possibly from another thread.
    case connectionClosedLocally
    case ioFailed(detail: String)

    public var description: String {
        switch self {
        case .notAPEMCertificate(let detail):
            return "certificate file is not a PEM certificate (\(detail)); expected text starting with -----BEGIN CERTIFICATE-----. Restore the file or create a new identity."
        case .notAPEMPrivateKey(let detail):
            return "private key file is not a PEM private key (\(detail)); expected text starting with -----BEGIN PRIVATE KEY-----. Restore the file or create a new identity."
        case .keyDoesNotMatchCertificate:
            return "the private key does not belong to the certificate; restore the matching pair of files or create a new identity"
        case .certificateSignatureInvalid:
            return "the certificate's self-signature does not verify: the file is corrupt; restore it or create a new identity"
        case .certificateGenerationFailed(let detail):
            return "could not generate a device certificate: \(detail)"
        case .tlsSetupFailed(let detail):
            return "could not set up TLS with this device's certificate: \(detail)"
        case .peerNotAllowed(let id):
            return "refused device \(id): it is not paired with this device. If you trust it, pair it by adding this device ID."
        case .unexpectedPeer(let expected, let presented):
            // A reinstalled device answers at its old address with a new ID: the message said only "check the
            // address", and peers dialed the old ID there for good (found by review).
            return "expected device \(expected) but device \(presented) answered; check the address configured for that peer, "
                + "or, if that device was set up anew, pair it again: 'groupsync peer remove \(expected.short)', then 'groupsync peer add \(presented)'"
        case .peerPresentedNoCertificate:
            // Also what a client whose certificate has another kind of key looks like: only Ed25519 signatures
            // are offered, so it sends none (found by an independent implementation of the protocol).
            return "the peer presented no certificate (or one without an Ed25519 key, which is all GroupSync accepts), so it cannot be identified; it is not a GroupSync device"
        case .refusedByPeer(let alert, let ours):
            return "the peer refused the connection (\(alert)); it has probably not paired this device yet: add device ID \(ours) on the other side"
        case .dialedForAnotherDevice(let alert, let ours):
            return "the peer refused the connection (\(alert)): it dialed this address for another of its paired devices and found this one (\(ours)); on that peer, correct the address stored for the device it meant (groupsync peer add ID HOST:PORT)"
        case .handshakeFailed(let detail):
            return "TLS handshake failed: \(detail) (the peer may not speak TLS 1.3 or may not be a GroupSync device)"
        case .handshakeTimedOut(let after):
            return "TLS handshake did not finish within \(after); the peer is too slow or not speaking TLS"
        case .addressResolutionFailed(let host, let detail):
            return "cannot resolve host '\(host)': \(detail); check the peer's address"
        case .addressResolutionUnavailable(let host, let detail):
            return "cannot resolve host '\(host)' now: \(detail); the network or its name service is not up yet"
        case .connectFailed(let host, let port, let detail):
            return "cannot connect to \(host) port \(port): \(detail)"
        case .connectTimedOut(let host, let port, let after):
            return "connecting to \(host) port \(port) timed out after \(after); the peer may be offline or a firewall drops the traffic"
        case .bindFailed(let host, let port, let detail):
            // The advice fits a port in use only: out of descriptors, say, another port would fail alike.
            let advice = detail == String(cString: strerror(EADDRINUSE)) ? "; choose another port or stop the program using it" : ""
            return "cannot listen on \(host) port \(port): \(detail)\(advice)"
        case .acceptFailed(let detail):
            return "accepting a connection failed: \(detail)"
        case .listenerClosed:
            return "the listener was closed"
        case .readTimedOut(let after):
            return "the peer sent nothing for \(after)"
        case .writeTimedOut(let after):
            return "the peer accepted no data for \(after); the connection is no longer usable"
        case .connectionLost(let detail):
            return "connection lost: \(detail)"
        case .connectionClosedLocally:
            return "the connection was closed by this device"
        case .ioFailed(let detail):
            return "connection failed: \(detail)"
        }
    }
}
