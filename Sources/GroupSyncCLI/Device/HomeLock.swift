import Glibc

/// An advisory lock on a file in the home, held while a body runs: commands of one device that must not
/// overlap take turns on it (two `init`s on a fresh home; balance commands that ask peers for rights). A
/// process killed while holding it lets go with its descriptors.
enum HomeLock {
    static func exclusively<T>(_ path: String, _ body: () throws(CLIError) -> T) throws(CLIError) -> T {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .failure("cannot lock \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }  // which also lets go of the lock
        while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
        return try body()
    }

    /// Waits until no process holds the lock at `path` exclusively, without making the file: a command that
    /// finds the home unfinished waits for an `init` that may be finishing it. No lock file, no wait.
    static func awaitRelease(_ path: String) {
        // Non-blocking: a FIFO put in its place (which the home's checks refuse later) must not hang the open.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return }
        while flock(fd, LOCK_SH) != 0 && errno == EINTR {}
        close(fd)
    }
}
