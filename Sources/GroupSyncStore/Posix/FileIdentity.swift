import Glibc

/// Which file a path names now (device and inode): how a process tells that a file it opened was moved,
/// replaced or removed under it, whatever now stands at its path.
public struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64

    /// Nil when nothing is at `path` (a link is followed).
    public init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
