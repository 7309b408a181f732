import Glibc
import Synchronization

/// A socket file descriptor that one thread may close while others are blocked on it.
///
/// Why not just `close(fd)`: another thread blocked in `poll`/`accept` on that number would keep waiting, and the
/// number can be reused at once by an unrelated `open()`, so the blocked thread would then act on the wrong file.
/// Instead `close()` first shuts the socket down, which wakes every blocked thread, and the number is released only
/// when the last thread using it has left (`acquire`/`release` bracket each use).
final class SocketHandle: Sendable {
    private struct State {
        var fd: Int32
        var users = 0
        var closing = false
        var shutDown = false
    }

    private let state: Mutex<State>

    init(fd: Int32) {
        state = Mutex(State(fd: fd))
    }

    deinit {
        state.withLock { if $0.fd >= 0 { _ = Glibc.close($0.fd) } }
    }

    /// The descriptor, guaranteed open until the matching `release()`; throws once `close()` has been called.
    func acquire() throws(TransportError) -> Int32 {
        let fd = state.withLock { s -> Int32 in
            guard !s.closing, s.fd >= 0 else { return -1 }
            s.users += 1
            return s.fd
        }
        guard fd >= 0 else { throw .connectionClosedLocally }
        return fd
    }

    func release() {
        state.withLock { s in
            s.users -= 1
            if s.closing && s.users == 0 && s.fd >= 0 {
                _ = Glibc.close(s.fd)
                s.fd = -1
            }
        }
    }

    /// True once `shutdown()` or `close()` was called: lets a woken reader report "closed locally" rather than
    /// blaming the peer for the EOF it then sees.
    var isShutDown: Bool {
        state.withLock { $0.shutDown }
    }

    /// Shuts down both directions, waking any thread blocked on the socket. The descriptor stays allocated.
    func shutdown() {
        state.withLock { s in
            guard s.fd >= 0, !s.shutDown else { return }
            s.shutDown = true
            _ = Glibc.shutdown(s.fd, Int32(SHUT_RDWR))
        }
    }

    /// Shuts the socket down and releases the descriptor as soon as no thread is using it.
    func close() {
        state.withLock { s in
            guard s.fd >= 0, !s.closing else { return }
            s.closing = true
            if !s.shutDown {
                s.shutDown = true
                _ = Glibc.shutdown(s.fd, Int32(SHUT_RDWR))
            }
            if s.users == 0 {
                _ = Glibc.close(s.fd)
                s.fd = -1
            }
        }
    }

    /// Closes after a failed handshake without destroying the alert we just sent.
    ///
    /// Why: closing a socket whose receive buffer still holds unread data makes the kernel send a reset, and a
    /// reset can reach the peer before it has read our TLS alert, so it would report "connection reset" instead of
    /// "refused". Half-closing first and reading what the peer still sends (briefly, and at most 64 KiB, so a hostile
    /// peer cannot hold us) lets the alert arrive intact.
    func closeAfterDraining(for duration: Duration) {
        if let fd = try? acquire() {
            _ = Glibc.shutdown(fd, Int32(SHUT_WR))
            let deadline = ContinuousClock.now + duration
            var buffer = [UInt8](repeating: 0, count: 4096)
            var total = 0
            while total < 65536, SocketSupport.wait(fd, forWriting: false, until: deadline) == .ready {
                let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if count > 0 {
                    total += count
                } else if count < 0 && (errno == EAGAIN || errno == EINTR) {
                    continue
                } else {
                    break  // EOF or error: the peer is done
                }
            }
            release()
        }
        close()
    }
}
