import GroupSyncCore
import Synchronization

/// A TCP connection accepted by a `TLSListener`, not yet authenticated.
///
/// Why a separate step: the handshake is slow next to `accept()` and a client can stall it, so the accepting thread
/// hands this to a worker thread that calls `handshake(timeout:)`; a stalled client then costs one worker for at most
/// the timeout and never holds up the accept loop.
public final class PendingConnection: Sendable {
    /// The client's numeric address and port.
    public let remoteAddress: String
    /// Until the handshake takes the socket over (the `TLSConnection` then owns it and this object must not
    /// close it when released).
    private let socket: Mutex<SocketHandle?>
    private let context: TLSContext

    init(socket: SocketHandle, remoteAddress: String, context: TLSContext) {
        self.socket = Mutex(socket)
        self.remoteAddress = remoteAddress
        self.context = context
    }

    deinit {
        close()
    }

    /// Authenticates the client within `timeout`. Call at most once; the socket is closed if this fails.
    /// A client whose device ID `isAllowed` rejects fails with `TransportError.peerNotAllowed(id)`.
    public func handshake(timeout: Duration = .seconds(10)) throws(TransportError) -> TLSConnection {
        guard let socket = socket.withLock({ $0.take() }) else { throw .connectionClosedLocally }
        return try TLSConnection.handshake(socket: socket, remoteAddress: remoteAddress, context: context, role: .server,
                                    expectedPeer: nil, timeout: timeout, deadline: .now + timeout)
    }

    /// Drops the connection without a handshake (e.g. when too many are pending).
    public func close() {
        socket.withLock { $0.take() }?.close()
    }
}
