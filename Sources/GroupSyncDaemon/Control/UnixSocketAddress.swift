import Glibc

/// A `sockaddr_un` for a path, and whether the path fits.
struct UnixSocketAddress {
    var storage = sockaddr_un()
    var isValid = false

    static func make(_ path: String) -> UnixSocketAddress {
        var address = UnixSocketAddress()
        address.storage.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.storage.sun_path)
        guard bytes.count < capacity else { return address }
        withUnsafeMutableBytes(of: &address.storage.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
            raw[bytes.count] = 0
        }
        address.isValid = true
        return address
    }
}
