/// What can go wrong with the local store, each phrased so the user knows what to do.
public enum StoreError: Error, Equatable, CustomStringConvertible {
    case cannotOpen(path: String, reason: String)
    case corrupt(path: String, reason: String)
    case diskFull(path: String)
    case readOnlyFileSystem(path: String)
    case busy
    case sqlite(code: Int32, message: String)
    case invalidEntry(String)
    case unsupportedSchema(path: String, version: Int64)
    /// A peer's batch, merged only while the peer is paired (`Store.mergesOnlyFromPairedPeers`), came after it
    /// was removed. The short device ID.
    case peerNoLongerPaired(String)

    public var description: String {
        switch self {
        case let .cannotOpen(path, reason): "cannot open the store \(path): \(reason)"
        case let .corrupt(path, reason): "the store \(path) is damaged (\(reason)); nothing was changed. To recover, stop the daemon and move it aside together with its -wal and -shm files, and let a paired device refill it, or restore it from a backup (peers then resend what the backup lacks)"
        case let .diskFull(path): "the disk holding \(path) is full; free some space and try again"
        case let .readOnlyFileSystem(path): "the file system holding \(path) is mounted read-only (the store writes beside it even to be read: its log's index); nothing was changed. Remount it read-write and try again"
        case .busy: "the store stayed locked by another process for too long"
        case let .sqlite(code, message): "SQLite error \(code): \(message)"
        case let .invalidEntry(why): "invalid entry: \(why)"
        case let .unsupportedSchema(path, version): "the store \(path) has schema version \(version), newer than this groupsync understands; upgrade groupsync"
        case let .peerNoLongerPaired(peer): "device \(peer) is no longer paired: its changes were not merged"
        }
    }
}
