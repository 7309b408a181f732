import Glibc

/// The raw socket calls the transport needs, with the sockaddr and errno handling kept in one place.
/// Every function retries on EINTR, so a signal delivered to the process never surfaces as an I/O error.
enum SocketSupport {
    /// One address from getaddrinfo, copied out so the C list can be freed at once.
    struct Address {
        var family: Int32
        var storage: sockaddr_storage
        var length: socklen_t

        /// "127.0.0.1:22000" or "[::1]:22000", for logs and error messages.
        var text: String { SocketSupport.numericText(storage, length) }

        /// The socket address as bytes, for comparing two addresses.
        var bytes: [UInt8] { withUnsafeBytes(of: storage) { Array($0.prefix(Int(length))) } }

        /// The numeric host alone, without brackets or port ("::1").
        var hostText: String {
            let full = text
            let host = full.lastIndex(of: ":").map { full[..<$0] } ?? full[...]
            return host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : String(host)
        }

        /// The port (nil for a family other than IPv4 and IPv6, which is left alone when set).
        var port: UInt16? {
            get {
                withUnsafeBytes(of: storage) { raw -> UInt16? in
                    switch family {
                    case AF_INET: UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port)
                    case AF_INET6: UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port)
                    default: nil
                    }
                }
            }
            set {
                guard let newValue else { return }
                let offset = switch family {
                case AF_INET: MemoryLayout<sockaddr_in>.offset(of: \.sin_port)
                case AF_INET6: MemoryLayout<sockaddr_in6>.offset(of: \.sin6_port)
                default: Int?.none
                }
                guard let offset else { return }
                withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: newValue.bigEndian, toByteOffset: offset, as: UInt16.self) }
            }
        }
    }

    static func errnoText(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }

    /// Resolves a host name or numeric address. An empty host means every local interface (for listening).
    static func resolve(host: String, port: UInt16, passive: Bool) throws(TransportError) -> [Address] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0)
        var list: UnsafeMutablePointer<addrinfo>? = nil
        let status = host.isEmpty
            ? getaddrinfo(nil, String(port), &hints, &list)
            : getaddrinfo(host, String(port), &hints, &list)
        guard status == 0 else {
            let detail = status == EAI_SYSTEM ? errnoText() : String(cString: gai_strerror(status))
            if status == EAI_AGAIN { throw .addressResolutionUnavailable(host: host, detail: detail) }
            throw .addressResolutionFailed(host: host, detail: detail)
        }
        defer { freeaddrinfo(list) }
        var result: [Address] = []
        var entry = list
        while let info = entry?.pointee {
            entry = info.ai_next
            guard let source = info.ai_addr, info.ai_addrlen <= MemoryLayout<sockaddr_storage>.size else { continue }
            var storage = sockaddr_storage()
            withUnsafeMutableBytes(of: &storage) { target in
                target.copyMemory(from: UnsafeRawBufferPointer(start: source, count: Int(info.ai_addrlen)))
            }
            let address = Address(family: info.ai_family, storage: storage, length: info.ai_addrlen)
            // A name on two lines of a hosts file ("127.0.0.1 localhost" twice is common) comes back twice: the
            // listener would collide with its own socket (found by review), a dialer would try it twice.
            if !result.contains(where: { $0.bytes == address.bytes }) { result.append(address) }
        }
        guard !result.isEmpty else { throw .addressResolutionFailed(host: host, detail: "no usable address") }
        return result
    }

    /// Whether any interface, loopback included, has an IPv6 address. With IPv6 disabled (`disable_ipv6`) none
    /// has, yet the kernel still lets the IPv6 wildcard be bound.
    static func machineHasIPv6Address() -> Bool {
        var list: UnsafeMutablePointer<ifaddrs>? = nil
        // Unknown is taken as yes: leaving out an address that works would be worse than listing one that cannot.
        guard getifaddrs(&list) == 0 else { return true }
        defer { freeifaddrs(list) }
        var entry = list
        while let interface = entry?.pointee {
            entry = interface.ifa_next
            if let address = interface.ifa_addr, Int32(address.pointee.sa_family) == AF_INET6 { return true }
        }
        return false
    }

    /// A TCP socket that is not inherited by child processes (close-on-exec is set atomically at creation).
    static func makeSocket(family: Int32) -> Int32 {
        socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    }

    static func setNonBlocking(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
    }

    static func setCloseOnExec(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFD)
        if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
    }

    static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) {
        var value = value
        _ = setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Sends small protocol messages at once instead of waiting to coalesce them (Nagle), which matters for the
    /// request/response turns of a sync protocol.
    static func setNoDelay(_ fd: Int32) {
        setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
    }

    static func bind(_ fd: Int32, _ address: Address) -> Bool {
        var storage = address.storage
        return withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, address.length) == 0 }
        }
    }

    /// Starts a non-blocking connect; true if it completed or is in progress.
    static func startConnect(_ fd: Int32, _ address: Address) -> Bool {
        var storage = address.storage
        let status = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, address.length) }
        }
        // EINTR on a connect leaves it running in the background, exactly like EINPROGRESS.
        return status == 0 || errno == EINPROGRESS || errno == EINTR
    }

    /// The pending error of a socket (the outcome of a non-blocking connect).
    static func pendingError(_ fd: Int32) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) == 0 else { return errno }
        return value
    }

    /// The address a socket is bound to (getsockname).
    private static func localAddress(_ fd: Int32) -> (storage: sockaddr_storage, length: socklen_t)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
        }
        return ok ? (storage, length) : nil
    }

    /// The address a socket is bound to, numeric ("[::1]:22100").
    static func localAddressText(_ fd: Int32) -> String? {
        localAddress(fd).map { numericText($0.storage, $0.length) }
    }

    /// The port a socket is bound to (the real one when bound to port 0).
    static func localPort(_ fd: Int32) -> UInt16? {
        guard let (storage, length) = localAddress(fd) else { return nil }
        return Address(family: Int32(storage.ss_family), storage: storage, length: length).port
    }

    /// Accepts one connection; returns the new descriptor and the peer's address text, or the errno.
    static func accept(_ fd: Int32) -> Result<(Int32, String), Errno> {
        while true {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let client = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(fd, $0, &length) }
            }
            if client >= 0 {
                // Glibc's Swift overlay lacks accept4, so close-on-exec is set just after (a tiny window only).
                setCloseOnExec(client)
                return .success((client, numericText(storage, length)))
            }
            // EINTR: a signal. ECONNABORTED: the client gave up while queued. Neither concerns the listener.
            if errno == EINTR || errno == ECONNABORTED { continue }
            return .failure(Errno(errno))
        }
    }

    struct Errno: Error {
        var code: Int32
        init(_ code: Int32) { self.code = code }
    }

    enum WaitResult { case ready, timedOut }

    /// Waits until `fd` is readable (or writable), the deadline passes, or the socket is shut down / fails
    /// (reported as ready, so the caller's next I/O call sees the real error). `nil` deadline waits forever.
    static func wait(_ fd: Int32, forWriting: Bool, until deadline: ContinuousClock.Instant?) -> WaitResult {
        while true {
            var timeoutMilliseconds: Int32 = -1
            if let deadline {
                let remaining = deadline - .now
                if remaining <= .zero { return .timedOut }
                timeoutMilliseconds = milliseconds(roundingUp: remaining)
            }
            var descriptor = pollfd(fd: fd, events: Int16(forWriting ? POLLOUT : POLLIN), revents: 0)
            let status = poll(&descriptor, 1, timeoutMilliseconds)
            if status > 0 { return .ready }
            if status == 0 { continue }  // re-check the deadline: poll may round down
            if errno == EINTR { continue }
            return .ready
        }
    }

    /// Rounded up so a wait never ends a hair early and spins; capped to fit poll's Int32.
    static func milliseconds(roundingUp duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        let total = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: max(0, total))
    }

    static func numericText(_ storage: sockaddr_storage, _ length: socklen_t) -> String {
        var storage = storage
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let status = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo($0, length, &host, socklen_t(host.count), &service, socklen_t(service.count),
                            NI_NUMERICHOST | NI_NUMERICSERV)
            }
        }
        guard status == 0 else { return "unknown address" }
        let hostText = String(decoding: host.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let serviceText = String(decoding: service.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return Int32(storage.ss_family) == AF_INET6 ? "[\(hostText)]:\(serviceText)" : "\(hostText):\(serviceText)"
    }
}
