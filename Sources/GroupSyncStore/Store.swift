import CSQLite
import GroupSyncCore

/// The durable App Group store of one device: SQLite in WAL mode, shared by every process on the machine.
///
/// Every write runs in an immediate transaction that reads the store's clock, ticks it, writes the entry
/// and the clock back, and commits with `synchronous=FULL`: when a write returns, it is on disk, and the
/// hybrid clock is monotonic across all processes that share the file.
public final class Store: ReplicaStore {
    public let path: String
    public let device: DeviceID
    /// A random ID made with the store. A peer that remembers how far it read us drops that memory when
    /// this changes (the store was recreated), as Syncthing does with its index IDs.
    public private(set) var storeID: String = ""
    let database: SQLiteDatabase
    private let physicalClock: @Sendable () -> Int64
    private let maxForwardDriftMillis: Int64
    /// Called after each committed change, e.g. to wake watchers in other processes.
    public var didCommit: (() -> Void)?

    public static let maxNameBytes = 1024
    public static let maxValueBytes = 1 << 20

    public init(path: String, device: DeviceID,
                physicalClock: @escaping @Sendable () -> Int64 = WallClock.nowMillis,
                maxForwardDriftMillis: Int64 = HybridClock.defaultMaxForwardDriftMillis) throws(StoreError) {
        self.path = path
        self.device = device
        self.physicalClock = physicalClock
        self.maxForwardDriftMillis = maxForwardDriftMillis
        database = try SQLiteDatabase(path: path)
        try StoreSchema.prepare(database)
        storeID = try readMeta("store_id").map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    // MARK: Local writes

    /// Stores `value` under `suite`/`key`. Always succeeds locally unless the disk fails.
    @discardableResult
    public func set(_ value: Value, suite: String, key: String) throws(StoreError) -> Change {
        try Self.validate(suite: suite, key: key)
        guard value.isStorable else { throw .invalidEntry("numbers and dates must be finite") }
        let encoded = ValueCodec.encode(value)
        guard encoded.count <= Self.maxValueBytes else { throw .invalidEntry("value is \(encoded.count) bytes; the limit is \(Self.maxValueBytes)") }
        return try writeLocal(suite: suite, key: key, value: value)
    }

    /// Writes a tombstone. Returns `nil` (and writes nothing) when there is no live value to delete.
    @discardableResult
    public func delete(suite: String, key: String) throws(StoreError) -> Change? {
        try Self.validate(suite: suite, key: key)
        let change: Change? = try database.transaction(immediate: true) { () throws(StoreError) -> Change? in
            guard let current = try entry(suite: suite, key: key), !current.isDeleted else { return nil }
            return try stampAndWrite(suite: suite, key: key, value: nil)
        }
        if change != nil { didCommit?() }
        return change
    }

    private func writeLocal(suite: String, key: String, value: Value?) throws(StoreError) -> Change {
        let change = try database.transaction(immediate: true) { () throws(StoreError) -> Change in
            try stampAndWrite(suite: suite, key: key, value: value)
        }
        didCommit?()
        return change
    }

    /// Inside a write transaction: tick the shared clock and write the entry at the next sequence.
    func stampAndWrite(suite: String, key: String, value: Value?) throws(StoreError) -> Change {
        var clock = HybridClock(last: try readClock(), maxForwardDriftMillis: maxForwardDriftMillis)
        let hlc = clock.tick(physicalMillis: physicalClock())
        try writeClock(clock.last)
        let entry = Entry(suite: suite, key: key, value: value, version: Version(hlc: hlc, origin: device))
        return try writeEntry(entry)
    }

    // MARK: Remote entries

    /// Merges entries from a peer, in one transaction: all of them are durable together or none is.
    public func apply(_ entries: [Entry]) throws(StoreError) -> ApplyResult {
        try apply(entries, physicalMillis: physicalClock())
    }

    public func apply(_ entries: [Entry], physicalMillis now: Int64) throws(StoreError) -> ApplyResult {
        for entry in entries {
            try Self.validate(suite: entry.suite, key: entry.key)
            if let value = entry.value, !value.isStorable { throw .invalidEntry("non-finite number in \(entry.suite)/\(entry.key)") }
        }
        let result = try database.transaction(immediate: true) { () throws(StoreError) -> ApplyResult in
            var result = ApplyResult()
            var clock = HybridClock(last: try readClock(), maxForwardDriftMillis: maxForwardDriftMillis)
            for entry in entries {
                do throws(ClockError) {
                    try clock.observe(entry.version.hlc, physicalMillis: now)
                } catch {
                    result.refused.append((entry, error))
                    continue
                }
                if LastWriterWins.wins(entry, over: try self.entry(suite: entry.suite, key: entry.key)) {
                    result.applied.append(try writeEntry(entry))
                } else {
                    result.superseded += 1
                }
            }
            try writeClock(clock.last)
            return result
        }
        if !result.applied.isEmpty { didCommit?() }
        return result
    }

    // MARK: Peer watermarks

    /// How far we have read a peer's history, or `nil` if never (or the peer's store was recreated
    /// since, which the caller detects by comparing store IDs).
    public func watermark(peer: DeviceID) throws(StoreError) -> Watermark? {
        let statement = try cached("SELECT store_id, sequence FROM watermarks WHERE peer = ?1")
        defer { statement.reset() }
        statement.bind(1, peer.bytes)
        guard try statement.step() else { return nil }
        return Watermark(storeID: statement.string(0), sequence: statement.int64(1))
    }

    public func setWatermark(_ watermark: Watermark, peer: DeviceID) throws(StoreError) {
        let statement = try cached("""
            INSERT INTO watermarks(peer, store_id, sequence) VALUES (?1, ?2, ?3)
            ON CONFLICT(peer) DO UPDATE SET store_id = excluded.store_id, sequence = excluded.sequence
            """)
        statement.bind(1, peer.bytes)
        statement.bind(2, watermark.storeID)
        statement.bind(3, watermark.sequence)
        try database.transaction(immediate: true) { () throws(StoreError) in try statement.run() }
    }

    // MARK: Reads

    /// The entry for a key, tombstones included.
    public func entry(suite: String, key: String) throws(StoreError) -> Entry? {
        let statement = try cached("SELECT value, hlc_wall, hlc_logical, origin FROM entries WHERE suite = ?1 AND key = ?2")
        defer { statement.reset() }
        statement.bind(1, suite)
        statement.bind(2, key)
        guard try statement.step() else { return nil }
        return try readEntry(statement, suite: suite, key: key, firstColumn: 0)
    }

    /// Live entries of a suite, sorted by key.
    public func liveEntries(suite: String) throws(StoreError) -> [Entry] {
        let statement = try cached("SELECT value, hlc_wall, hlc_logical, origin, key FROM entries WHERE suite = ?1 AND value IS NOT NULL ORDER BY key")
        defer { statement.reset() }
        statement.bind(1, suite)
        var entries: [Entry] = []
        while try statement.step() {
            entries.append(try readEntry(statement, suite: suite, key: statement.string(4), firstColumn: 0))
        }
        return entries
    }

    /// Changes after `sequence`, oldest first, at most `limit`.
    public func changes(after sequence: Int64, limit: Int = 1000) throws(StoreError) -> [Change] {
        let statement = try cached("SELECT value, hlc_wall, hlc_logical, origin, suite, key, seq FROM entries WHERE seq > ?1 ORDER BY seq LIMIT ?2")
        defer { statement.reset() }
        statement.bind(1, sequence)
        statement.bind(2, Int64(limit))
        var changes: [Change] = []
        while try statement.step() {
            let entry = try readEntry(statement, suite: statement.string(4), key: statement.string(5), firstColumn: 0)
            changes.append(Change(sequence: statement.int64(6), entry: entry))
        }
        return changes
    }

    /// The sequence of the latest change, 0 for an empty store.
    public func lastSequence() throws(StoreError) -> Int64 {
        try readMetaInt("seq")
    }

    public func currentClock() throws(StoreError) -> HLC { try readClock() }

    /// Runs SQLite's own consistency check; `["ok"]` when healthy.
    public func integrityCheck() throws(StoreError) -> [String] {
        let statement = try database.prepare("PRAGMA integrity_check")
        var lines: [String] = []
        while try statement.step() { lines.append(statement.string(0)) }
        return lines
    }

    // MARK: Validation

    public static func validate(suite: String, key: String) throws(StoreError) {
        for (what, name) in [("suite", suite), ("key", key)] {
            guard !name.isEmpty else { throw .invalidEntry("the \(what) name is empty") }
            guard name.utf8.count <= maxNameBytes else { throw .invalidEntry("the \(what) name is longer than \(maxNameBytes) bytes") }
            guard !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw .invalidEntry("the \(what) name contains a control character")
            }
        }
    }

    // MARK: Rows

    private var statements: [String: SQLiteStatement] = [:]

    func cached(_ sql: String) throws(StoreError) -> SQLiteStatement {
        if let statement = statements[sql] { return statement }
        let statement = try database.prepare(sql)
        statements[sql] = statement
        return statement
    }

    private func readEntry(_ statement: SQLiteStatement, suite: String, key: String, firstColumn c: Int32) throws(StoreError) -> Entry {
        var value: Value?
        if !statement.isNull(c) {
            do { value = try ValueCodec.decode(statement.bytes(c)) } catch {
                throw .corrupt(path: path, reason: "value of \(suite)/\(key) cannot be decoded: \(error)")
            }
        }
        let hlc = HLC(wallMillis: statement.int64(c + 1), logical: UInt32(truncatingIfNeeded: statement.int64(c + 2)))
        guard let origin = try? DeviceID(bytes: statement.bytes(c + 3)) else {
            throw .corrupt(path: path, reason: "origin of \(suite)/\(key) is not a device ID")
        }
        return Entry(suite: suite, key: key, value: value, version: Version(hlc: hlc, origin: origin))
    }

    private func writeEntry(_ entry: Entry) throws(StoreError) -> Change {
        let sequence = try readMetaInt("seq") + 1
        let statement = try cached("""
            INSERT INTO entries(suite, key, value, hlc_wall, hlc_logical, origin, seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            ON CONFLICT(suite, key) DO UPDATE SET value = excluded.value, hlc_wall = excluded.hlc_wall,
              hlc_logical = excluded.hlc_logical, origin = excluded.origin, seq = excluded.seq
            """)
        statement.bind(1, entry.suite)
        statement.bind(2, entry.key)
        statement.bind(3, entry.value.map(ValueCodec.encode))
        statement.bind(4, entry.version.hlc.wallMillis)
        statement.bind(5, Int64(entry.version.hlc.logical))
        statement.bind(6, entry.version.origin.bytes)
        statement.bind(7, sequence)
        try statement.run()
        try writeMetaInt("seq", sequence)
        return Change(sequence: sequence, entry: entry)
    }

    private func readClock() throws(StoreError) -> HLC {
        HLC(wallMillis: try readMetaInt("hlc_wall"), logical: UInt32(truncatingIfNeeded: try readMetaInt("hlc_logical")))
    }

    private func writeClock(_ hlc: HLC) throws(StoreError) {
        try writeMetaInt("hlc_wall", hlc.wallMillis)
        try writeMetaInt("hlc_logical", Int64(hlc.logical))
    }

    private func readMeta(_ name: String) throws(StoreError) -> [UInt8]? {
        let statement = try cached("SELECT value FROM meta WHERE name = ?1")
        defer { statement.reset() }
        statement.bind(1, name)
        guard try statement.step() else { return nil }
        return statement.bytes(0)
    }

    private func readMetaInt(_ name: String) throws(StoreError) -> Int64 {
        let statement = try cached("SELECT CAST(value AS INTEGER) FROM meta WHERE name = ?1")
        defer { statement.reset() }
        statement.bind(1, name)
        guard try statement.step() else { return 0 }
        return statement.int64(0)
    }

    private func writeMetaInt(_ name: String, _ value: Int64) throws(StoreError) {
        let statement = try cached("INSERT INTO meta(name, value) VALUES (?1, ?2) ON CONFLICT(name) DO UPDATE SET value = excluded.value")
        statement.bind(1, name)
        statement.bind(2, value)
        try statement.run()
    }
}
