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
}
