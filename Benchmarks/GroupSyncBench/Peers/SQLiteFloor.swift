import CSQLite
import Foundation

/// The physical floor of a durable catch-up on this machine: raw SQLite upserts into a table shaped like the
/// store's (`WITHOUT ROWID`, primary key (suite, key), unique index on seq), WAL with synchronous=FULL,
/// one prepared statement, `batch` rows per transaction (a catch-up batch, `SessionConfiguration.batchSize`).
/// No Swift store layer, no merge, no clock: only what any durable replica must pay.
enum SQLiteFloor {
    static var version: String { String(cString: sqlite3_libversion()) }

    /// Seconds to upsert `count` rows.
    static func upsertSeconds(count: Int, batch: Int, path: String) throws -> Double {
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK, let db else { throw BenchError("sqlite open \(path)") }
        defer { sqlite3_close(db) }
        func exec(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw BenchError("sqlite: \(String(cString: sqlite3_errmsg(db))) in \(sql)") }
        }
        try exec("PRAGMA journal_mode=WAL")
        try exec("PRAGMA synchronous=FULL")
        try exec("""
            CREATE TABLE IF NOT EXISTS entries(suite TEXT NOT NULL, key TEXT NOT NULL, value BLOB, hlc_wall INTEGER NOT NULL,
              hlc_logical INTEGER NOT NULL, origin BLOB NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY(suite, key)) WITHOUT ROWID;
            CREATE UNIQUE INDEX IF NOT EXISTS entries_by_seq ON entries(seq);
            """)
        var statement: OpaquePointer?
        let sql = """
            INSERT INTO entries(suite, key, value, hlc_wall, hlc_logical, origin, seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            ON CONFLICT(suite, key) DO UPDATE SET value = excluded.value, hlc_wall = excluded.hlc_wall,
              hlc_logical = excluded.hlc_logical, origin = excluded.origin, seq = excluded.seq
            """
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else { throw BenchError("sqlite prepare") }
        defer { sqlite3_finalize(statement) }
        // Rows are made before the clock starts: the floor is the database's cost, not string formatting's.
        let origin = [UInt8](repeating: 7, count: 32)
        let keys = (0..<count).map { Seeding.key($0) }
        let values: [[UInt8]] = (0..<count).map { index in
            guard case .string(let text) = Seeding.value(index) else { return [] }
            return [1, UInt8(text.utf8.count)] + Array(text.utf8)
        }
        let wall = Int64(Clock.wallMillis())
        let start = Clock.nanos()
        var index = 0
        while index < count {
            try exec("BEGIN IMMEDIATE")
            let end = min(count, index + batch)
            for row in index..<end {
                sqlite3_bind_text(statement, 1, Seeding.suite, -1, csqlite_transient())
                sqlite3_bind_text(statement, 2, keys[row], -1, csqlite_transient())
                values[row].withUnsafeBytes { _ = sqlite3_bind_blob(statement, 3, $0.baseAddress, Int32($0.count), csqlite_transient()) }
                sqlite3_bind_int64(statement, 4, wall)
                sqlite3_bind_int64(statement, 5, Int64(row))
                origin.withUnsafeBytes { _ = sqlite3_bind_blob(statement, 6, $0.baseAddress, 32, csqlite_transient()) }
                sqlite3_bind_int64(statement, 7, Int64(row + 1))
                guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchError("sqlite step: \(String(cString: sqlite3_errmsg(db)))") }
                sqlite3_reset(statement)
            }
            try exec("COMMIT")
            index = end
        }
        return Double(Clock.nanos() - start) / 1e9
    }
}
