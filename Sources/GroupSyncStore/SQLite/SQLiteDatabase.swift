import CBatchedLogVFS
import CSQLite
import Glibc

/// A thin, typed shell around one SQLite connection. Everything else in the store speaks to SQLite
/// through this file and `SQLiteStatement.swift`.
final class SQLiteDatabase {
    private(set) var handle: OpaquePointer?
    let path: String
    private let writerLock: WriterLock

    /// How long a writer waits for another process's transaction. Generous on purpose: an App Group write
    /// must never fail with "database is locked" just because 300 other processes got there first.
    static let busyTimeoutMillis: Int64 = 120_000

    init(path: String) throws(StoreError) {
        self.path = path
        // SQLite takes an empty file for a new database and would create the schema in it: a store truncated to
        // nothing would be silently reset. A store is never empty once created (its schema is written when
        // it is), unless its log still holds everything; so an empty file with no log is damage, reported.
        if Self.fileSize(path) == 0 && (Self.fileSize(path + "-wal") ?? 0) == 0 {
            throw .corrupt(path: path, reason: "the file is empty, as a store never is once created: it was truncated")
        }
        writerLock = WriterLock(path: path + "-writer")
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        // The batched-log VFS writes each commit's log frames in one write (see BatchedLogVFS.c); the files are
        // the default VFS's, so a process without it shares them. Without it (it could not register), the default.
        let rc = sqlite3_open_v2(path, &db, flags, groupsync_batched_log_vfs())
        guard rc == SQLITE_OK, let db else {
            if Self.isOnReadOnlyFileSystem(path) { sqlite3_close(db); throw .readOnlyFileSystem(path: path) }
            let message = db.map { Self.withSystemError(String(cString: sqlite3_errmsg($0)), of: $0) } ?? "out of memory"
            sqlite3_close(db)
            throw .cannotOpen(path: path, reason: message)
        }
        handle = db
        // Unretained: the handler runs only inside this connection's calls, so while `self` lives.
        sqlite3_busy_handler(db, { context, attempt in
            BusyWait.shouldRetry(attempt: attempt, database: Unmanaged<SQLiteDatabase>.fromOpaque(context!).takeUnretainedValue())
        }, Unmanaged.passUnretained(self).toOpaque())
        sqlite3_extended_result_codes(db, 1)
    }

    deinit { sqlite3_close_v2(handle) }

    /// SQLite's message with the system's reason behind it, when there is one: "unable to open database file"
    /// alone hid a process out of descriptors or a read-only file system (found by review).
    private static func withSystemError(_ message: String, of db: OpaquePointer?) -> String {
        let code = sqlite3_system_errno(db)
        return code == 0 ? message : "\(message) (\(String(cString: strerror(code))))"
    }

    /// Whether the folder holding `path` is on a file system mounted read-only. SQLite says so only as
    /// "unable to open database file" or "disk I/O error", and with the errno of its last try, often ENOENT
    /// (it falls back to opening the index file read-only, which a closed store does not have): checked
    /// when it fails, so the user is told what to do (found by review).
    static func isOnReadOnlyFileSystem(_ path: String) -> Bool {
        var info = statvfs()
        return statvfs(FolderSync.folder(of: path), &info) == 0 && info.f_flag & UInt(ST_RDONLY) != 0
    }

    /// The size of the file at `path`, nil when there is none.
    private static func fileSize(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }

    func execute(_ sql: String) throws(StoreError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(errorMessage)
            throw error(rc, message)
        }
    }

    /// Runs a statement without parameters or rows, prepared at its first use and kept: for the transaction
    /// control and pragmas every write runs, which `execute` would parse again each time.
    func executePrepared(_ sql: String) throws(StoreError) {
        let statement: SQLiteStatement
        if let cached = preparedControl[sql] {
            statement = cached
        } else {
            statement = try prepare(sql)
            preparedControl[sql] = statement
        }
        try statement.run(clearingBindings: false)
    }

    private var preparedControl: [String: SQLiteStatement] = [:]
    /// Who held SQLite's write lock at the first look of a long wait (`BusyWait`).
    var lockHoldersSeen: [LockHolders.Holder] = []

    func prepare(_ sql: String) throws(StoreError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw error(rc, lastMessage) }
        return SQLiteStatement(statement, database: self)
    }

    /// Rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes(handle)) }

    var lastMessage: String { String(cString: sqlite3_errmsg(handle)) }

    func error(_ code: Int32, _ message: String) -> StoreError {
        let primary = code & 0xFF
        if [SQLITE_READONLY, SQLITE_PERM, SQLITE_CANTOPEN, SQLITE_IOERR].contains(primary) && Self.isOnReadOnlyFileSystem(path) {
            return .readOnlyFileSystem(path: path)
        }
        switch primary {
        case SQLITE_BUSY, SQLITE_LOCKED: return .busy
        case SQLITE_CORRUPT, SQLITE_NOTADB: return .corrupt(path: path, reason: message)
        case SQLITE_FULL: return .diskFull(path: path)
        // A disk full under SQLite's own files (making the shared-memory index a reader needs, growing the
        // log) comes as an I/O error: named for what it is, so the user knows to free space.
        case SQLITE_IOERR where [ENOSPC, EDQUOT].contains(sqlite3_system_errno(handle)): return .diskFull(path: path)
        case SQLITE_READONLY, SQLITE_PERM, SQLITE_CANTOPEN: return .cannotOpen(path: path, reason: Self.withSystemError(message, of: handle))
        default: return .sqlite(code: code, message: message)
        }
    }

    /// A write transaction committed without its own fsync (`synchronous=NORMAL` for its commit): for
    /// bookkeeping whose loss only costs a resend, and for writes made visible before `syncWriteAheadLog`
    /// makes them durable. The WAL still orders it after every commit before it.
    func unsyncedTransaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try unsyncedTransaction(rollingBackOnNil: { () throws(StoreError) -> T? in try body() })!
    }

    /// `unsyncedTransaction`, but rolled back when `body` returns nil: for a body that finds only once it
    /// has written that its commit must be synced (SQLite refuses to change that inside a transaction).
    func unsyncedTransaction<T>(rollingBackOnNil body: () throws(StoreError) -> T?) throws(StoreError) -> T? {
        try executePrepared("PRAGMA synchronous=NORMAL")
        defer { try? executePrepared("PRAGMA synchronous=FULL") }
        return try transaction(immediate: true, rollingBackOnNil: body)
    }

    /// Makes every transaction committed so far durable: syncs the write-ahead log, through SQLite's own
    /// file handle for it (what a `synchronous=FULL` commit does at its end). An unsynced commit followed
    /// by this is as durable as a synced one; in between, other readers may already see it.
    func syncWriteAheadLog() throws(StoreError) {
        var file: UnsafeMutablePointer<sqlite3_file>?
        let rc = sqlite3_file_control(handle, "main", SQLITE_FCNTL_JOURNAL_POINTER, &file)
        guard rc == SQLITE_OK, let file, let methods = file.pointee.pMethods, let sync = methods.pointee.xSync else {
            // No log open (never in WAL mode while a connection is open): fall back to a synced checkpoint.
            try execute("PRAGMA wal_checkpoint(FULL)")
            return
        }
        let synced = sync(file, SQLITE_SYNC_NORMAL)
        guard synced == SQLITE_OK else { throw error(synced, "syncing the write-ahead log: \(String(cString: sqlite3_errstr(synced)))") }
    }

    /// Runs `body` in a transaction. `immediate` takes the write lock up front, so two writers never
    /// deadlock upgrading from read to write (which SQLite reports as an un-retryable SQLITE_BUSY).
    /// A busy error after the timeout is retried with backoff rather than surfaced: a local write always succeeds.
    func transaction<T>(immediate: Bool, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try transaction(immediate: immediate, rollingBackOnNil: { () throws(StoreError) -> T? in try body() })!
    }

    /// `transaction`, committed only when `body` returns a value; nil rolls it back.
    private func transaction<T>(immediate: Bool, rollingBackOnNil body: () throws(StoreError) -> T?) throws(StoreError) -> T? {
        // Writers queue on the writer lock first, asleep in the kernel, and are woken the moment it is free;
        // SQLite's own lock is then rarely contended (see `WriterLock`).
        if immediate { writerLock.acquire() }
        defer { if immediate { writerLock.release() } }
        var attempt = 0
        while true {
            do throws(StoreError) {
                try executePrepared(immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
                do {
                    guard let result = try body() else {
                        try executePrepared("ROLLBACK")
                        return nil
                    }
                    try executePrepared("COMMIT")
                    return result
                } catch {
                    try? executePrepared("ROLLBACK")
                    throw error
                }
            } catch where error == .busy && attempt < 50 {
                attempt += 1
                usleep(UInt32(min(attempt, 20)) * 10_000)
            }
        }
    }
}
