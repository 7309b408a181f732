import CSQLite
import Glibc

/// A prepared statement: bind, step, read columns. Reset after each use so it can be cached.
final class SQLiteStatement {
    private let statement: OpaquePointer
    private unowned let database: SQLiteDatabase

    init(_ statement: OpaquePointer, database: SQLiteDatabase) {
        self.statement = statement
        self.database = database
    }

    deinit { sqlite3_finalize(statement) }

    func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(statement, index, value) }
    func bind(_ index: Int32, _ value: String) { sqlite3_bind_text(statement, index, value, -1, csqlite_transient()) }
    func bind(_ index: Int32, _ bytes: [UInt8]?) {
        guard let bytes else { sqlite3_bind_null(statement, index); return }
        bytes.withUnsafeBytes { raw in
            // A zero-length blob still needs a non-null pointer, or SQLite stores NULL.
            _ = sqlite3_bind_blob(statement, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), csqlite_transient())
        }
    }

    /// Steps once; `true` while a row is available.
    func step() throws(StoreError) -> Bool {
        let rc = sqlite3_step(statement)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw database.error(rc, database.lastMessage)
        }
    }

    /// Runs a statement that returns no rows, then resets it. A statement whose every parameter is bound
    /// before each run may keep its bindings (`clearingBindings: false`): clearing frees copies that the next
    /// run's binds would replace anyway.
    func run(clearingBindings: Bool = true) throws(StoreError) {
        defer { reset(clearingBindings: clearingBindings) }
        _ = try step()
    }

    func reset(clearingBindings: Bool = true) {
        sqlite3_reset(statement)
        if clearingBindings { sqlite3_clear_bindings(statement) }
    }

    /// Whether a blob column holds exactly `bytes`, compared in place.
    func bytes(_ column: Int32, equal bytes: [UInt8]) -> Bool {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count == bytes.count else { return false }
        guard count > 0, let blob = sqlite3_column_blob(statement, column) else { return true }
        return bytes.withUnsafeBytes { memcmp($0.baseAddress!, blob, count) == 0 }
    }

    /// Whether a text column holds exactly `string`'s UTF-8, compared in place.
    func text(_ column: Int32, equals string: String) -> Bool {
        guard let text = sqlite3_column_text(statement, column) else { return string.isEmpty }
        let count = Int(sqlite3_column_bytes(statement, column))
        var string = string
        return string.withUTF8 { utf8 in utf8.count == count && (count == 0 || memcmp(utf8.baseAddress!, text, count) == 0) }
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }
    func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(statement, column) else { return "" }
        return String(cString: text)
    }
    func bytes(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let blob = sqlite3_column_blob(statement, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: blob, count: count))
    }
}
