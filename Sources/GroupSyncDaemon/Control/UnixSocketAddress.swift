import Glibc

/// The `sockaddr_un` for a socket's path, for one `bind` or `connect`.
///
/// A path too long for `sun_path` (107 bytes) is reached through its folder instead: `/proc/self/fd/N/NAME`,
/// with N a descriptor of the folder, held open only for the call. A home deeper than about 95 bytes could
/// not run the daemon at all, and a home given relatively to the daemon but absolutely to a command reached
/// it from one and not the other (found by review).
enum UnixSocketAddress {
    /// Calls `body` with the address of `path`; `nil` when no address can reach it (the name alone too long,
    /// or the folder unopenable), without calling `body`.
    static func with<Result>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result? {
        if let result = withDirect(path, body) { return result }
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        let folder = slash == path.utf8.startIndex ? "/" : String(path[..<slash])
        let name = String(path[path.utf8.index(after: slash)...])
        let folderFD = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folderFD >= 0 else { return nil }
        defer { close(folderFD) }
        return withDirect("/proc/self/fd/\(folderFD)/\(name)", body)
    }

    private static func withDirect<Result>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path), !bytes.contains(0) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
