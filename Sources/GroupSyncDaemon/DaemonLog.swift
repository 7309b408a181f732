import Glibc
import GroupSyncCore
import Synchronization

/// One line per meaningful event on stderr: `2026-11-29T13:15:00.123Z event=connected peer=ABCDEFG …`.
/// A lock keeps lines from different threads whole.
public final class DaemonLog: Sendable {
    private let lock = Mutex(())
    private let clock: @Sendable () -> Int64

    public init(clock: @escaping @Sendable () -> Int64) { self.clock = clock }

    public func write(_ message: String) {
        let line = ISO8601.format(secondsSince1970: Double(clock()) / 1000) + " " + message + "\n"
        lock.withLock { _ in
            var bytes = Array(line.utf8)[...]
            while !bytes.isEmpty {
                let n = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                bytes = bytes.dropFirst(n)
            }
        }
    }
}
