import Glibc

/// A device's home folder: the store, its identity, its settings. Private to the user: mode 0700, and
/// every file in it 0600 (the process runs with umask 077), because it holds the device's private key.
public struct Home: Sendable {
    public let path: String

    public init(path: String) {
        self.path = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
    }

    /// `--home`, else `$GROUPSYNC_HOME`, else `$XDG_DATA_HOME/groupsync`, else `~/.local/share/groupsync`,
    /// where `~` is `$HOME`, or the user's home directory in the password database when `HOME` is unset (as
    /// under `env -i` or some service managers). Nil when there is none: a shared fallback such as `/tmp`
    /// would let the first user to reach it take it from the others, and lose the key when `/tmp` is cleared.
    public static func resolve(explicit: String?, environment: [String: String]) -> Home? {
        if let explicit, !explicit.isEmpty { return Home(path: explicit) }
        if let fromEnvironment = environment["GROUPSYNC_HOME"], !fromEnvironment.isEmpty { return Home(path: fromEnvironment) }
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") { return Home(path: xdg + "/groupsync") }
        guard let userHome = environment["HOME"].flatMap({ $0.isEmpty ? nil : $0 }) ?? passwordDatabaseHome() else { return nil }
        return Home(path: userHome + "/.local/share/groupsync")
    }

    /// The effective user's home directory in the password database, if it names an absolute one.
    private static func passwordDatabaseHome() -> String? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        guard getpwuid_r(geteuid(), &entry, &buffer, buffer.count, &found) == 0, found != nil, let directory = entry.pw_dir else { return nil }
        let path = String(cString: directory)
        return path.hasPrefix("/") ? path : nil
    }

    public var storePath: String { path + "/" + Self.storeName }
    public static let storeName = "store.db"
    public var certificatePath: String { path + "/cert.pem" }
    public var privateKeyPath: String { path + "/key.pem" }
    public var namePath: String { path + "/name" }
    /// Held by `init` while it makes the identity, the name and the store; other commands wait on it only when
    /// they find the home unfinished.
    public var initLockPath: String { path + "/.init.lock" }

    /// The device's name as `init --name` last wrote it; nil when there is none or it cannot be read.
    public func deviceName() -> String? {
        (try? readFile(namePath))?.flatMap { $0.split(separator: "\n").first.map(String.init) }
    }
    /// Written to after every commit; watchers in any process wait on it with inotify. It has a folder of its
    /// own, watched instead of the home, so that the store's writes to its log in the home wake no one.
    public var changeSignalFolder: String { path + "/" + Self.changeSignalFolderName }
    public var changeSignalPath: String { changeSignalFolder + "/" + Self.changeSignalName }
    /// Creates `changeSignalFolder` (private, like the home) unless it exists; false when it cannot.
    public func createChangeSignalFolder() -> Bool { mkdir(changeSignalFolder, 0o700) == 0 || errno == EEXIST }
    public static let changeSignalName = "changes"
    public static let changeSignalFolderName = "signal"

    public var exists: Bool { access(path, F_OK) == 0 }

    /// Whether `init` has made anything here: a key, a certificate or a store. A folder without any (the
    /// user's own home given as `--home`, a mistyped `GROUPSYNC_HOME`) is not a GroupSync home, whatever its
    /// mode: telling the user to `chmod 700` it, as for a home whose key others may read, was wrong advice
    /// and exit 3 made the service restart for ever (found by review).
    public var hasIdentityOrStore: Bool {
        [privateKeyPath, certificatePath, storePath].contains { (file: String) in access(file, F_OK) == 0 }
    }

    /// Creates the folder (and its parents) with mode 0700 if missing. An empty folder of ours made
    /// beforehand (`mkdir home`, mode 0755) is made 0700: it holds nothing yet that others could have read,
    /// and refusing it as "readable by others, it holds a private key" said what was not so (found by review).
    public func create() throws(HomeError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw .cannotCreate(path: prefix, reason: String(cString: strerror(errno)))
            }
        }
        var info = stat()
        if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == geteuid(), info.st_mode & 0o077 != 0, isEmptyFolder {
            _ = chmod(path, 0o700)
        }
        try checkPrivate()
    }

    /// Whether the folder holds no file at all (false when it cannot be read).
    private var isEmptyFolder: Bool { entryNames()?.isEmpty ?? false }

    /// The names in the folder, `.` and `..` left out; nil when it cannot be read (errno says why).
    private func entryNames() -> [String]? {
        guard let folder = opendir(path) else { return nil }
        defer { closedir(folder) }
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Refuses a home that others can read or that belongs to another user: it holds a private key, and
    /// quietly "fixing" someone else's folder is not ours to do. Then refuses anything in it that is not the
    /// user's (`checkContents`).
    public func checkPrivate() throws(HomeError) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .cannotCreate(path: path, reason: String(cString: strerror(errno))) }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw .notAFolder(path: path) }
        guard info.st_uid == geteuid() else { throw .foreignOwner(path: path, uid: info.st_uid) }
        guard info.st_mode & 0o077 == 0 else { throw .readableByOthers(path: path, mode: info.st_mode & 0o777) }
        try checkContents()
    }

    /// What GroupSync keeps in a home, and the kind of file each must be. A FIFO or a folder in place of one
    /// would hang or silently disable what reads it (a FIFO as the key blocks every command in `fopen`).
    private static let expectedKinds: [(name: String, kind: mode_t, what: String)] = [
        ("key.pem", S_IFREG, "a file"), ("cert.pem", S_IFREG, "a file"), ("name", S_IFREG, "a file"),
        (storeName, S_IFREG, "a file"), (storeName + "-wal", S_IFREG, "a file"), (storeName + "-shm", S_IFREG, "a file"),
        ("daemon.lock", S_IFREG, "a file"), ("balance.lock", S_IFREG, "a file"), (".init.lock", S_IFREG, "a file"),
        (changeSignalFolderName, S_IFDIR, "a folder"), (changeSignalFolderName + "/" + changeSignalName, S_IFREG, "a file"),
    ]

    /// Refuses a file in the home that belongs to someone else, or that reaches someone else's file through a
    /// link, and one of GroupSync's files of the wrong kind. A home that was once open to others (made under
    /// umask 000, say) may hold a key, a certificate or a store that another user put there and can still
    /// read and write; making the folder 0700, as the error for it advises, does not make them the user's.
    /// Used as they were, they gave that user the device's identity, or a store paired with a device of theirs
    /// (found by review). Nothing is deleted: the user decides what to keep.
    private func checkContents() throws(HomeError) {
        guard let names = entryNames() else { throw .cannotRead(path: path, reason: String(cString: strerror(errno))) }
        let me = geteuid()
        // `lost+found` is root's at the root of an ext file system: a home there is no one else's doing.
        for name in names.filter({ $0 != "lost+found" }) + [Self.changeSignalFolderName + "/" + Self.changeSignalName] {
            let file = path + "/" + name
            var link = stat()
            guard lstat(file, &link) == 0 else { continue }  // gone meanwhile, or the signal file not made yet
            guard link.st_uid == me else { throw .foreignFile(path: file, uid: link.st_uid) }
            var target = link
            if (link.st_mode & S_IFMT) == S_IFLNK {
                guard stat(file, &target) == 0 else { continue }  // a dangling link fails where it is used, by name
                guard target.st_uid == me else { throw .linkToForeignFile(path: file, uid: target.st_uid) }
            }
            if let expected = Self.expectedKinds.first(where: { $0.name == name }), (target.st_mode & S_IFMT) != expected.kind {
                throw .wrongKind(path: file, expected: expected.what)
            }
        }
    }

    /// Reads a small text file of the home, `nil` if it does not exist.
    public func readFile(_ path: String) throws(HomeError) -> String? { try Self.readTextFile(path) }

    /// `readFile` for any file, a home's or not (`/proc`'s, whose sizes read as 0, included).
    static func readTextFile(_ path: String) throws(HomeError) -> String? {
        guard let file = fopen(path, "r") else {
            if errno == ENOENT { return nil }
            throw .cannotRead(path: path, reason: String(cString: strerror(errno)))
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n == 0 { break }
            bytes += buffer[0..<n]
            if bytes.count > 1 << 20 { throw .cannotRead(path: path, reason: "file is larger than 1 MiB") }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .cannotRead(path: path, reason: "not UTF-8 text") }
        return text
    }

    /// Writes a file atomically (temporary file, fsync, rename, fsync of the folder) with mode 0600.
    public func writeFileAtomically(_ path: String, contents: String) throws(HomeError) {
        let temporary = path + ".tmp.\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .cannotWrite(path: temporary, reason: String(cString: strerror(errno))) }
        guard FileDescriptorIO.writeAll(fd, Array(contents.utf8)), fsync(fd) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            unlink(temporary)
            throw .cannotWrite(path: temporary, reason: reason)
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .cannotWrite(path: path, reason: reason)
        }
        FolderSync.sync(self.path)
    }
}

public enum HomeError: Error, Equatable, CustomStringConvertible {
    case cannotCreate(path: String, reason: String)
    case notAFolder(path: String)
    case foreignOwner(path: String, uid: UInt32)
    case readableByOthers(path: String, mode: UInt32)
    case cannotRead(path: String, reason: String)
    case cannotWrite(path: String, reason: String)
    case notInitialized(path: String)
    case foreignFile(path: String, uid: UInt32)
    case linkToForeignFile(path: String, uid: UInt32)
    case wrongKind(path: String, expected: String)
    case socketPathTooLong(path: String)

    public var description: String {
        switch self {
        case let .cannotCreate(path, reason): "cannot create the home \(path): \(reason)"
        case let .notAFolder(path): "the home \(path) is not a folder"
        case let .foreignOwner(path, uid): "the home \(path) belongs to user \(uid), not to you; use your own --home"
        case let .readableByOthers(path, mode): "the home \(path) has mode \(String(mode, radix: 8)) and others can read it; it holds a private key: run 'chmod 700 \(path)' if that is intended to be yours (a file in it that someone else made is then refused)"
        case let .cannotRead(path, reason): "cannot read \(path): \(reason)"
        case let .cannotWrite(path, reason): "cannot write \(path): \(reason)"
        case let .notInitialized(path): "no GroupSync home at \(path): run 'groupsync init' first"
        case let .foreignFile(path, uid): "\(path) belongs to user \(uid), not to you: someone else has written in this home, so its key and store cannot be trusted; move the home aside and run 'groupsync init' for a new one"
        case let .linkToForeignFile(path, uid): "\(path) links to a file of user \(uid), not yours: this device's files must be your own; put your own file there"
        case let .wrongKind(path, expected): "\(path) is not \(expected); move it aside"
        case let .socketPathTooLong(path): "the control socket \(path) cannot be given a Unix socket address: its path is too long and its folder cannot be opened to reach it; use a home with a shorter path"
        }
    }
}
