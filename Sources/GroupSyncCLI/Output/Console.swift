import Glibc
import GroupSyncStore

/// Unbuffered writes to stdout and stderr. `watch` depends on each line leaving the process at once,
/// and a closed stdout (a reader that went away) must end the command, not kill it with SIGPIPE.
enum Console {
    /// Writes a line to stdout; false if it could not be written (the reader is gone, or worse).
    @discardableResult
    static func out(_ line: String) -> Bool {
        let written = writeAll(1, line + "\n")
        if !written, errno != EPIPE, outputFailure == nil { outputFailure = String(cString: strerror(errno)) }
        return written
    }

    /// Why stdout could not be written, unless its reader went away (EPIPE, which ends a `watch` as asked): a
    /// full disk, an I/O error. The command then fails with exit 3, so that a script never takes output it
    /// did not get for a success (found by review: `get > /dev/full` exited 0). One thread writes stdout.
    nonisolated(unsafe) static var outputFailure: String?

    static func error(_ line: String) { _ = writeAll(2, line + "\n") }

    private static func writeAll(_ fd: Int32, _ text: String) -> Bool {
        FileDescriptorIO.writeAll(fd, Array(text.utf8))
    }
}
