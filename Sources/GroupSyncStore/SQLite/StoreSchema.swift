import CSQLite
import Glibc

/// Creates, checks and migrates the store's tables. Versioned with `PRAGMA user_version` so a later
/// groupsync can migrate, and an older one refuses a newer file instead of misreading it.
///
/// - 1: entries, meta, peers, watermarks; later version-1 stores also have `send_horizons`, and those made
///   since balance records were keyed by store epoch say so in `meta` (`balance_epoch_keys`).
/// - 2: the same tables, `send_horizons` always there. The number changed so that a groupsync from before
///   it, which reads balance records by device alone and writes beside the epoch-keyed ones (drawing the
///   day's allowance twice), refuses a store this one has opened rather than misread it.
///
/// This groupsync reads and writes a version-1 store as it is (it only adds `send_horizons`, which earlier
/// groupsyncs ignore or use as it does). `raisingVersion: false` leaves the number at 1: while an earlier
/// daemon still runs on the store, raising it would make that daemon refuse every new connection.
enum StoreSchema {
    static let version: Int64 = 2

    /// Checks, creates or migrates the schema; the version the store is at afterwards.
    @discardableResult
    static func prepare(_ db: SQLiteDatabase, raisingVersion: Bool = true) throws(StoreError) -> Int64 {
        // Checked before anything is written: another program's SQLite file under the store's name (a copy
        // gone wrong, a path mixed up) is refused as it is, not switched to WAL and given our tables.
        let current = try userVersion(db)
        let tables = try tableNames(db)
        let ours = switch current {
        case 0: tables.isEmpty
        case 1: tables.isSuperset(of: version1Tables)
        case version: tables.isSuperset(of: ownTables)
        default: true   // newer: refused below with its version
        }
        guard ours else {
            let listed = tables.sorted().prefix(5).joined(separator: ", ")
            throw .corrupt(path: db.path, reason: "it is not a GroupSync store: an SQLite file with schema version \(current) and tables: \(listed.isEmpty ? "none" : listed)")
        }
        // WAL lets readers and one writer proceed together across processes; FULL syncs the WAL on every
        // commit, so an acknowledged write survives power loss, not just a crash of the process.
        try db.execute("PRAGMA journal_mode=WAL")
        try db.execute("PRAGMA synchronous=FULL")
        try db.execute("PRAGMA foreign_keys=OFF")
        if current == version || current == 1 && !raisingVersion && tables.contains("send_horizons") { return current }
        guard current < version else { throw .unsupportedSchema(path: db.path, version: current) }
        return try db.transaction(immediate: true) { () throws(StoreError) -> Int64 in
            // Another process may have created or migrated the schema while we waited for the lock.
            switch try userVersion(db) {
            case 0: try create(db)
            case 1:
                try migrateFromVersion1(db)
                guard raisingVersion else { return 1 }
            case let other:
                guard other <= version else { throw .unsupportedSchema(path: db.path, version: other) }
                return other
            }
            try db.execute("PRAGMA user_version=\(version)")
            return version
        }
    }

    private static func create(_ db: SQLiteDatabase) throws(StoreError) {
        try db.execute("""
            CREATE TABLE entries(
              suite TEXT NOT NULL,
              key TEXT NOT NULL,
              value BLOB,                 -- ValueCodec bytes; NULL is a tombstone
              hlc_wall INTEGER NOT NULL,
              hlc_logical INTEGER NOT NULL,
              origin BLOB NOT NULL,       -- 32-byte device ID of the writer
              seq INTEGER NOT NULL,       -- local change sequence, for watchers and catch-up
              PRIMARY KEY(suite, key)) WITHOUT ROWID;
            CREATE UNIQUE INDEX entries_by_seq ON entries(seq);
            CREATE TABLE meta(name TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID;
            -- paired devices: local configuration, never replicated
            CREATE TABLE peers(device BLOB PRIMARY KEY, name TEXT NOT NULL, address TEXT NOT NULL) WITHOUT ROWID;
            -- per peer: the highest sequence of ours we may ever have sent it (detects a restored store)
            CREATE TABLE send_horizons(peer BLOB PRIMARY KEY, sequence INTEGER NOT NULL) WITHOUT ROWID;
            -- per peer: which of its stores (epoch) we have read, and up to which of its sequences
            CREATE TABLE watermarks(peer BLOB PRIMARY KEY, store_id TEXT NOT NULL, sequence INTEGER NOT NULL) WITHOUT ROWID;
            """)
        let statement = try db.prepare("INSERT INTO meta(name, value) VALUES ('store_id', ?1)")
        statement.bind(1, randomHex(bytes: 16))
        try statement.run()
        // Made by a groupsync that keys balance records by store epoch (see `Store.balanceEpoch`).
        try db.execute("INSERT INTO meta(name, value) VALUES ('balance_epoch_keys', 1)")
    }

    /// Entries, peers and watermarks stay as they are. A store without `send_horizons` gets it empty: having
    /// no horizon for a peer only makes the next session resend everything to it, once. A store without the
    /// `balance_epoch_keys` mark keeps reading its balance records as its legacy epoch (`Store.balanceEpoch`).
    private static func migrateFromVersion1(_ db: SQLiteDatabase) throws(StoreError) {
        try db.execute("CREATE TABLE IF NOT EXISTS send_horizons(peer BLOB PRIMARY KEY, sequence INTEGER NOT NULL) WITHOUT ROWID")
    }

    /// The tables the schema creates, and those every version-1 store has.
    private static let ownTables: Set<String> = ["entries", "meta", "peers", "send_horizons", "watermarks"]
    private static let version1Tables: Set<String> = ["entries", "meta", "peers", "watermarks"]

    private static func tableNames(_ db: SQLiteDatabase) throws(StoreError) -> Set<String> {
        let statement = try db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        var names = Set<String>()
        while try statement.step() { names.insert(statement.string(0)) }
        return names
    }

    static func userVersion(_ db: SQLiteDatabase) throws(StoreError) -> Int64 {
        let statement = try db.prepare("PRAGMA user_version")
        guard try statement.step() else { return 0 }
        return statement.int64(0)
    }

    private static func randomHex(bytes count: Int) -> String {
        var bytes = [UInt8](repeating: 0, count: count)
        sqlite3_randomness(Int32(count), &bytes)
        return bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
