import GroupSyncCore
import GroupSyncStore
import Synchronization

/// One line per meaningful event on stderr: `2026-11-29T13:15:00.123Z event=connected peer=ABCDEFG …`.
/// A lock keeps lines from different threads whole.
public final class DaemonLog: Sendable {
    private let lock = Mutex(())
    private let clock: @Sendable () -> Int64

    public init(clock: @escaping @Sendable () -> Int64) { self.clock = clock }

    public func write(_ message: String) {
        let line = ISO8601.format(secondsSince1970: Double(clock()) / 1000, withMillis: true) + " " + message + "\n"
        lock.withLock { _ in _ = FileDescriptorIO.writeAll(2, Array(line.utf8)) }
    }
}
