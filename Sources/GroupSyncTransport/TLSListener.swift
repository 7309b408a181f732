import Glibc
import Synchronization

/// Listening TCP sockets, one per address of the host it was given, whose connections are authenticated with a
/// `TLSContext`.
///
/// Typical use: one thread loops on `accept()` and hands each `PendingConnection` to a worker thread, which calls
/// `handshake(timeout:)` and then serves the `TLSConnection`. `close()` from any thread ends the loop: the blocked
/// `accept()` throws `TransportError.listenerClosed`.
public final class TLSListener: Sendable {
    /// The port bound (the kernel's choice when `bind` was given port 0), the same on every address.
    public let port: UInt16
    /// Every address listened on, numeric ("127.0.0.1:22100", "[::1]:22100"), in the resolver's order, whatever
    /// name `bind` was given: "localhost" is both ::1 and 127.0.0.1, and a peer may have been paired with either.
    public let addresses: [String]
    /// The first of `addresses`.
    public var address: String { addresses[0] }
    /// The host's other addresses, numeric, each with why it could not be listened on ("[::1]:22100: Cannot
    /// assign requested address").
    public let addressesNotBound: [String]
    public let context: TLSContext
    /// Non-blocking, so that a connection that vanished between `poll` and `accept` on one socket does not hold
    /// up the others.
    private let sockets: [SocketHandle]
    /// Where the next `accept` starts looking, so that a busy address cannot starve the others.
    private let nextSocket = Atomic<Int>(0)

    private init(port: UInt16, addresses: [String], addressesNotBound: [String], context: TLSContext, sockets: [SocketHandle]) {
        self.port = port
        self.addresses = addresses
        self.addressesNotBound = addressesNotBound
        self.context = context
        self.sockets = sockets
    }

    deinit {
        for socket in sockets { socket.close() }
    }

    /// Listens on every address of `host` ("127.0.0.1", "::1", a host name, "0.0.0.0" for all IPv4 interfaces,
    /// "::" alone for all IPv4 and IPv6 ones, "" for every wildcard the system has, IPv6's left out while IPv6 is
    /// disabled) and `port` (0 picks a free one, taken for all the addresses; see `port`). An address the machine
    /// cannot listen on (not one of its own, or a family it lacks) is left out and named in `addressesNotBound`;
    /// `bind` throws when none is left, and when another program holds the port on any of them, since a peer
    /// dialing that one would reach it.
    public static func bind(host: String, port: UInt16, context: TLSContext,
                            backlog: Int32 = 128) throws(TransportError) -> TLSListener {
        var resolved = try SocketSupport.resolve(host: host, port: port, passive: true)
        // Every wildcard on a machine with IPv6 disabled: [::] would bind, and status would name an address no
        // peer can reach (found by review). It is left out like an address that cannot be bound.
        var disabled: [String] = []
        if host.isEmpty, resolved.contains(where: { $0.family != AF_INET6 }), !SocketSupport.machineHasIPv6Address() {
            disabled = resolved.filter { $0.family == AF_INET6 }.map { "\($0.text): IPv6 is disabled on this machine (no interface has an IPv6 address)" }
            resolved.removeAll { $0.family == AF_INET6 }
        }
        // Port 0 on several addresses: the port the kernel picked on the first may be another program's on a
        // later one. Then the port is picked again, starting from the next address, since the kernel tends to
        // pick the same port again for the same family.
        let picks = port == 0 && resolved.count > 1 ? 4 * resolved.count : 1
        for pick in 0..<picks {
            switch listenOnEach(resolved, startingAt: pick % resolved.count, port: port, backlog: backlog) {
            case .listening(let sockets, let addresses, let notBound, let boundPort):
                return TLSListener(port: boundPort, addresses: addresses, addressesNotBound: disabled + notBound, context: context, sockets: sockets)
            case .portTaken(let address, let takenPort, let detail):
                if port == 0 && takenPort != 0 && pick + 1 < picks { continue }
                throw .bindFailed(host: resolved.count > 1 ? address.hostText : host, port: takenPort, detail: detail)
            case .noAddress(let detail):
                throw .bindFailed(host: host, port: port, detail: detail)
            }
        }
        throw .bindFailed(host: host, port: port, detail: "no address to bind")
    }

    private enum Binding {
        /// The sockets and their numeric addresses in the resolver's order, the addresses left out with why, the port.
        case listening([SocketHandle], [String], [String], UInt16)
        /// Another program holds the port on this address; nothing is left bound.
        case portTaken(SocketSupport.Address, UInt16, String)
        /// No address could be listened on, for this last reason.
        case noAddress(String)
    }

    /// Binds each address, `start` first, on one port (the first's, when `port` is 0).
    private static func listenOnEach(_ resolved: [SocketSupport.Address], startingAt start: Int, port: UInt16,
                                     backlog: Int32) -> Binding {
        // Several addresses: an IPv6 wildcard must not also claim IPv4's, or the IPv4 wildcard beside it could
        // not bind ("" resolves to both). One address alone keeps the system's default, so "::" serves both.
        let v6Only = resolved.count > 1
        var bound: [(socket: SocketHandle, text: String)?] = Array(repeating: nil, count: resolved.count)
        var notBound: [String] = [], boundPort = port, lastFailure = "no address to bind"
        for index in resolved.indices.map({ ($0 + start) % resolved.count }) {
            var address = resolved[index]
            if boundPort != port { address.port = boundPort }
            switch listenOn(address, v6Only: v6Only, backlog: backlog) {
            case .success(let (socket, text, actualPort)):
                bound[index] = (socket, text)
                boundPort = actualPort
            case .failure(let failure) where failure.code == EADDRINUSE:
                for case let held? in bound { held.socket.close() }
                return .portTaken(address, boundPort, failure.detail)
            case .failure(let failure):
                lastFailure = failure.detail
                notBound.append("\(address.text): \(failure.detail)")
            }
        }
        let listening = bound.compactMap { $0 }
        guard !listening.isEmpty else { return .noAddress(lastFailure) }
        return .listening(listening.map(\.socket), listening.map(\.text), notBound, boundPort)
    }

    private struct BindFailure: Error {
        var code: Int32
        var detail: String { SocketSupport.errnoText(code) }
    }

    /// One listening socket on `address`: the socket, its numeric address and its port.
    private static func listenOn(_ address: SocketSupport.Address, v6Only: Bool,
                                 backlog: Int32) -> Result<(SocketHandle, String, UInt16), BindFailure> {
        let fd = SocketSupport.makeSocket(family: address.family)
        guard fd >= 0 else { return .failure(BindFailure(code: errno)) }
        let socket = SocketHandle(fd: fd)
        // A restarted service must be able to bind again while old connections linger in TIME_WAIT.
        SocketSupport.setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
        if v6Only && address.family == AF_INET6 { SocketSupport.setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1) }
        guard SocketSupport.bind(fd, address), listen(fd, backlog) == 0, let port = SocketSupport.localPort(fd) else {
            let code = errno
            socket.close()
            return .failure(BindFailure(code: code))
        }
        SocketSupport.setNonBlocking(fd)
        return .success((socket, SocketSupport.localAddressText(fd) ?? address.text, port))
    }

    /// Waits for the next TCP connection on any of the addresses. Throws `listenerClosed` once `close()` has been
    /// called. Other errors (e.g. "too many open files") are reported as `acceptFailed` and leave the listener
    /// usable; the caller should pause briefly before accepting again rather than spin.
    public func accept() throws(TransportError) -> PendingConnection {
        while true {
            var descriptors: [Int32] = []
            for socket in sockets {
                guard let fd = try? socket.acquire() else {
                    for held in sockets.prefix(descriptors.count) { held.release() }
                    throw .listenerClosed
                }
                descriptors.append(fd)
            }
            let outcome = acceptOne(descriptors)
            for socket in sockets { socket.release() }
            switch outcome {
            case .accepted(let client, let address):
                SocketSupport.setNoDelay(client)
                return PendingConnection(socket: SocketHandle(fd: client), remoteAddress: address, context: context)
            case .nothingWaiting:
                if sockets.contains(where: \.isShutDown) { throw .listenerClosed }
            case .failed(let code):
                if sockets.contains(where: \.isShutDown) { throw .listenerClosed }
                throw .acceptFailed(detail: SocketSupport.errnoText(code))
            }
        }
    }

    private enum AcceptOutcome {
        case accepted(Int32, String)
        /// Woken, but no connection was left to take (another thread took it, or the client gave up), or closed.
        case nothingWaiting
        case failed(Int32)
    }

    /// Sleeps in `poll` until a socket is readable (a connection waits, or `close()` shut it down), then accepts
    /// from the readable ones, starting after the socket the last connection came from.
    private func acceptOne(_ descriptors: [Int32]) -> AcceptOutcome {
        var polled = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let status = poll(&polled, nfds_t(polled.count), -1)
        if status < 0 { return errno == EINTR ? .nothingWaiting : .failed(errno) }
        let start = nextSocket.load(ordering: .relaxed)
        for step in polled.indices {
            let index = (start + step) % polled.count
            guard polled[index].revents != 0 else { continue }
            switch SocketSupport.accept(polled[index].fd) {
            case .success(let (client, address)):
                nextSocket.store(index + 1, ordering: .relaxed)
                return .accepted(client, address)
            case .failure(let failure) where failure.code == EAGAIN || failure.code == EWOULDBLOCK:
                continue
            case .failure(let failure):
                return .failed(failure.code)
            }
        }
        return .nothingWaiting
    }

    /// Stops listening; wakes a thread blocked in `accept()`. Connections already accepted are not affected.
    public func close() {
        for socket in sockets { socket.close() }
    }
}
