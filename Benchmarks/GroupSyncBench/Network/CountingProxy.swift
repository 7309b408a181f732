import Foundation
import Glibc

/// A loopback TCP proxy that counts the bytes it forwards, so "bytes on the wire" is measured the same way
/// for GroupSync (TLS records, handshake included) and Redis (RESP and RDB): the peer address a daemon or
/// replica dials is the proxy, which forwards to the real port.
///
/// One thread accepts; each connection gets two pump threads. The upstream port may be set after the proxy
/// starts (a daemon's port is known only once it runs); until then connections are dropped unforwarded.
final class CountingProxy: @unchecked Sendable {
    let port: UInt16
    private let listenFD: Int32
    private let lock = NSLock()
    private var upstream: UInt16?
    private var forwarded: [Int] = [0, 0]  // [client->upstream, upstream->client]
    private var connectTimes: [UInt64] = []
    private var lastByteAt: UInt64 = 0
    private var open: [Int32] = []
    private var stopped = false

    init(upstream: UInt16? = nil) throws {
        (listenFD, port) = try Sockets.listen()
        self.upstream = upstream
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit { stop() }

    /// Where connections go; nil refuses them (accepted, then closed at once: a partition).
    func setUpstream(_ port: UInt16?) { lock.withLock { upstream = port } }

    /// Bytes forwarded in both directions since the last `reset`.
    var bytes: Int { lock.withLock { forwarded[0] + forwarded[1] } }
    var bytesEachWay: (toUpstream: Int, fromUpstream: Int) { lock.withLock { (forwarded[0], forwarded[1]) } }
    /// When each forwarded connection was accepted (monotonic ns), since the last `reset`.
    var connections: [UInt64] { lock.withLock { connectTimes } }
    var lastByte: UInt64 { lock.withLock { lastByteAt } }

    func reset() {
        lock.withLock {
            forwarded = [0, 0]
            connectTimes = []
            lastByteAt = 0
        }
    }

    /// Cuts every forwarded connection (both ends see EOF) but keeps listening.
    func dropConnections() {
        let fds = lock.withLock { open }
        for fd in fds { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
    }

    func stop() {
        let fds: [Int32]? = lock.withLock {
            guard !stopped else { return nil }
            stopped = true
            return open
        }
        guard let fds else { return }
        Glibc.shutdown(listenFD, Int32(SHUT_RDWR))
        close(listenFD)
        for fd in fds { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listenFD, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let acceptedAt = Clock.nanos()
            let (target, isStopped) = lock.withLock { (upstream, stopped) }
            guard !isStopped, let target, let server = try? Sockets.connect(port: target) else {
                close(client)
                continue
            }
            Sockets.noDelay(client)
            lock.withLock {
                connectTimes.append(acceptedAt)
                open += [client, server]
            }
            let finished = NSLock()
            var remaining = 2
            let done = { [self] in
                let last = finished.withLock { remaining -= 1; return remaining == 0 }
                guard last else { return }
                lock.withLock { open.removeAll { $0 == client || $0 == server } }
                close(client)
                close(server)
            }
            Thread.detachNewThread { [self] in pump(from: client, to: server, direction: 0); done() }
            Thread.detachNewThread { [self] in pump(from: server, to: client, direction: 1); done() }
        }
    }

    private func pump(from source: Int32, to destination: Int32, direction: Int) {
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            let sent = buffer.withUnsafeBytes { Sockets.writeAll(destination, UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            let now = Clock.nanos()
            lock.withLock {
                forwarded[direction] += n
                lastByteAt = now
            }
            if !sent { break }
        }
        // Pass the end on: the other side reads EOF, and its own pump finishes in turn.
        Glibc.shutdown(destination, Int32(SHUT_WR))
        Glibc.shutdown(source, Int32(SHUT_RD))
    }
}
