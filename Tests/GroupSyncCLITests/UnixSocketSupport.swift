import Glibc

/// A Unix stream socket at a path, for tests that talk to a daemon's control socket or stand in for one
/// (a listener that never answers is a daemon that is stopped or held up).
enum UnixSocketSupport {
    /// A socket bound to `path` and listening with `backlog`; nil if either fails.
    static func listener(at path: String, backlog: Int32) -> Int32? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        guard withAddress(path, { bind(fd, $0, $1) }) == 0, listen(fd, backlog) == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// `connect(2)` of `fd` to `path`: its result.
    static func connect(_ fd: Int32, to path: String) -> Int32 {
        withAddress(path) { Glibc.connect(fd, $0, $1) }
    }

    private static func withAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
    }
}
