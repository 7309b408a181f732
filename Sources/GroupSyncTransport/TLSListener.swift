import Glibc

/// A listening TCP socket whose connections are authenticated with a `TLSContext`.
///
/// Typical use: one thread loops on `accept()` and hands each `PendingConnection` to a worker thread, which calls
/// `handshake(timeout:)` and then serves the `TLSConnection`. `close()` from any thread ends the loop: the blocked
/// `accept()` throws `TransportError.listenerClosed`.
public final class TLSListener: Sendable {
    /// The port actually bound (the kernel's choice when `bind` was given port 0).
    public let port: UInt16
    /// The address bound, numeric ("127.0.0.1:22100", "[::1]:22100"), whatever name `bind` was given.
    public let address: String
    /// The other addresses the host name resolved to, numeric, on which this listener does not listen: one
    /// socket holds one address, and the first that binds is taken.
    public let addressesNotBound: [String]
    public let context: TLSContext
    private let socket: SocketHandle

    private init(port: UInt16, address: String, addressesNotBound: [String], context: TLSContext, socket: SocketHandle) {
        self.port = port
        self.address = address
        self.addressesNotBound = addressesNotBound
        self.context = context
        self.socket = socket
    }

    deinit {
        socket.close()
    }

    /// Listens on `host` ("127.0.0.1", "::1", a host name, "0.0.0.0" for all IPv4 interfaces, "::" for all IPv4 and
    /// IPv6 ones, "" for the system's choice of wildcard) and `port` (0 picks a free one; see `port`).
    public static func bind(host: String, port: UInt16, context: TLSContext,
                            backlog: Int32 = 128) throws(TransportError) -> TLSListener {
        let addresses = try SocketSupport.resolve(host: host, port: port, passive: true)
        var lastError = TransportError.bindFailed(host: host, port: port, detail: "no address to bind")
        for (index, address) in addresses.enumerated() {
            let fd = SocketSupport.makeSocket(family: address.family)
            guard fd >= 0 else {
                lastError = .bindFailed(host: host, port: port, detail: SocketSupport.errnoText())
                continue
            }
            let socket = SocketHandle(fd: fd)
            // A restarted service must be able to bind again while old connections linger in TIME_WAIT.
            SocketSupport.setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
            guard SocketSupport.bind(fd, address), listen(fd, backlog) == 0 else {
                lastError = .bindFailed(host: host, port: port, detail: SocketSupport.errnoText())
                socket.close()
                continue
            }
            guard let boundPort = SocketSupport.localPort(fd) else {
                lastError = .bindFailed(host: host, port: port, detail: SocketSupport.errnoText())
                socket.close()
                continue
            }
            let others = addresses.enumerated().filter { $0.offset != index }.map { SocketSupport.numericText($0.element.storage, $0.element.length) }
            return TLSListener(port: boundPort, address: SocketSupport.localAddressText(fd) ?? address.text,
                               addressesNotBound: others, context: context, socket: socket)
        }
        throw lastError
    }

    /// Waits for the next TCP connection. Throws `listenerClosed` once `close()` has been called.
    /// Other errors (e.g. "too many open files") are reported as `acceptFailed` and leave the listener usable;
    /// the caller should pause briefly before accepting again rather than spin.
    public func accept() throws(TransportError) -> PendingConnection {
        let fd: Int32
        do {
            fd = try socket.acquire()
        } catch {
            throw .listenerClosed
        }
        defer { socket.release() }
        switch SocketSupport.accept(fd) {
        case .success(let (client, address)):
            SocketSupport.setNoDelay(client)
            return PendingConnection(socket: SocketHandle(fd: client), remoteAddress: address, context: context)
        case .failure(let failure):
            if socket.isShutDown { throw .listenerClosed }
            throw .acceptFailed(detail: SocketSupport.errnoText(failure.code))
        }
    }

    /// Stops listening; wakes a thread blocked in `accept()`. Connections already accepted are not affected.
    public func close() {
        socket.close()
    }
}
