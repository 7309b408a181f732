import Glibc

/// Makes a folder's entries durable: a file created, linked, renamed or removed in it survives a power cut
/// only once the folder itself is synced (the file's own fsync covers its bytes, not its name).
public enum FolderSync {
    /// Best effort: a folder that cannot be opened or synced leaves the names as durable as the filesystem
    /// makes them on its own, which is what every caller had before it asked.
    public static func sync(_ folder: String) {
        let fd = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// The folder a path names a file in ("." for a bare name).
    public static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
