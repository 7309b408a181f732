import GroupSyncStore

/// Unbuffered writes to stdout and stderr. `watch` depends on each line leaving the process at once,
/// and a closed stdout (a reader that went away) must end the command, not kill it with SIGPIPE.
enum Console {
    /// Writes a line to stdout; false if the reader is gone.
    @discardableResult
    static func out(_ line: String) -> Bool { writeAll(1, line + "\n") }

    static func error(_ line: String) { _ = writeAll(2, line + "\n") }

    private static func writeAll(_ fd: Int32, _ text: String) -> Bool {
        FileDescriptorIO.writeAll(fd, Array(text.utf8))
    }
}
