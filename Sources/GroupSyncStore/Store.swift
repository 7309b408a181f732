import CSQLite
import Glibc
import GroupSyncCore

/// The durable App Group store of one device: SQLite in WAL mode, shared by every process on the machine.
///
/// Every write runs in an immediate transaction that reads the store's clock, ticks it, writes the entry
/// and the clock back, and commits; the write-ahead log is synced before the write returns, so when it
/// returns it is on disk, and the hybrid clock is monotonic across all processes that share the file.
public final class Store: ReplicaStore {
    public let path: String
    public let device: DeviceID
    /// A random ID made with the store. A peer that remembers how far it read us drops that memory when
    /// this changes (the store was recreated), as Syncthing does with its index IDs.
    public private(set) var storeID: String = ""
    /// The epoch this store's balance records are keyed by (`BalanceAccount`): the store ID for a store
    /// made since balance keys carry the epoch; `nil` (the device's legacy epoch, records keyed by device
    /// alone) for a store made before, which wrote those legacy records and so may keep extending them.
    public private(set) var balanceEpoch: String?
    /// Below `StoreSchema.version` only when opened without raising it, beside an earlier groupsync's daemon.
    public let schemaVersion: Int64
    public var isOnAnEarlierSchema: Bool { schemaVersion < StoreSchema.version }
    let database: SQLiteDatabase
    private let physicalClock: @Sendable () -> Int64
    private let maxForwardDriftMillis: Int64
    /// Called after each committed change, e.g. to wake watchers in other processes.
    public var didCommit: (() -> Void)?

    public static let maxValueBytes = ValueCodec.maxStoredBytes

    /// `raisingSchemaVersion: false` opens a store written by an earlier groupsync without raising its schema
    /// version (`StoreSchema`), for a process that works beside an earlier daemon still running on it.
    public init(path: String, device: DeviceID,
                physicalClock: @escaping @Sendable () -> Int64 = WallClock.nowMillis,
                maxForwardDriftMillis: Int64 = HybridClock.defaultMaxForwardDriftMillis,
                raisingSchemaVersion: Bool = true) throws(StoreError) {
        self.path = path
        self.device = device
        self.physicalClock = physicalClock
        self.maxForwardDriftMillis = maxForwardDriftMillis
        if access(path, F_OK) != 0 {
            try Self.refuseLeftoverLog(path)
            madeTheFile = try Self.createAtomically(path)
        }
        database = try SQLiteDatabase(path: path)
        openedFile = FileIdentity(path: path)
        schemaVersion = try StoreSchema.prepare(database, raisingVersion: raisingSchemaVersion)
        // The log and its index exist once the store has been read (WAL mode).
        openedSidecars = Self.sidecarSuffixes.compactMap { suffix in FileIdentity(path: path + suffix).map { (suffix, $0) } }
        storeID = try readMeta("store_id").map { String(decoding: $0, as: UTF8.self) } ?? ""
        if try readMeta("balance_epoch_keys") != nil, BalanceAccount.isValidEpoch(storeID) { balanceEpoch = storeID }
    }

    /// Whether this open made the store file (there was none): said to the user, as a store made where one is
    /// expected means the old one was moved aside or removed. Of processes making it together, one made it.
    public private(set) var madeTheFile = false

    /// The file this store opened, to tell whether the store at `path` is still it (`isStillAtItsPath`).
    private var openedFile: FileIdentity?

    /// Whether `path` still names the file this store opened. It does not once the store was moved aside,
    /// replaced or removed under a running process, which would otherwise go on reading and writing a file
    /// nobody else opens any more: what every other process writes, it would never see.
    ///
    /// The same holds for SQLite's log and its shared index beside it, which SQLite never removes while a
    /// process holds the store: removed under a running daemon, the next command made a new index, the two
    /// processes kept separate indexes of one log and overwrote each other's writes, acknowledged ones
    /// included (found by review).
    public var isStillAtItsPath: Bool {
        guard let openedFile, FileIdentity(path: path) == openedFile else { return false }
        return openedSidecars.allSatisfy { FileIdentity(path: path + $0.suffix) == $0.file }
    }

    /// SQLite's log and its shared index, named after the store file.
    static let sidecarSuffixes = ["-wal", "-shm"]
    /// The log and index files as this store first found them (`isStillAtItsPath`).
    private var openedSidecars: [(suffix: String, file: FileIdentity)] = []

    /// A store file gone while its write-ahead log is still there (moved aside or removed without it, often
    /// while a watch or the daemon held it open, which keeps the log): a new store made here would take that
    /// log for its own, and SQLite would replay another store's pages into it (found by review: the new
    /// store came out damaged, or with the old store's ID). The log also holds the old store's latest writes,
    /// so it is the user's to put back or delete. A shared-memory index alone is left to SQLite, which
    /// rebuilds one that no process holds (removing it could pull it from under a process creating the
    /// store at this moment).
    private static func refuseLeftoverLog(_ path: String) throws(StoreError) {
        // The store checked again after the log: another process creating the store at the same moment has
        // linked it into place before opening it, which is what made the log.
        guard access(path + "-wal", F_OK) == 0, access(path, F_OK) != 0 else { return }
        throw .cannotOpen(path: path, reason: "it is gone but its write-ahead log \(path)-wal is still here, left by a store moved or removed without it; that log holds the store's latest writes: put it back beside that store, with \(path)-shm, or delete both to start a new store")
    }

    /// Makes a new store file whole before it appears under its name. SQLite creates a file empty and writes
    /// its first page a moment later, and another process opening it in between (an app and the daemon
    /// starting together) would find an empty file, which is what a truncated store looks like and is refused
    /// (`SQLiteDatabase`). So the store is built under a private name and linked into place; when another
    /// process got there first, its store is the one everybody uses.
    ///
    /// The private name is random as well as the process's: one left by a power cut (its link and removal not
    /// yet durable) must never be opened again as a store under construction, by a later process that
    /// happens to get the same ID, and taken into place with that old store's ID. The folder is synced once
    /// the store is in place, so that a power cut right after `init` does not leave the store under its
    /// private name only and a new one, with another ID, made at the next command.
    /// Whether it made it (false: another process got there first).
    private static func createAtomically(_ path: String) throws(StoreError) -> Bool {
        let building = path + ".new-\(getpid())-\(UInt32.random(in: .min ... .max))"
        defer {
            for suffix in ["", "-wal", "-shm", "-writer"] { unlink(building + suffix) }
            FolderSync.sync(FolderSync.folder(of: path))
        }
        do {
            let database = try SQLiteDatabase(path: building)
            try StoreSchema.prepare(database)
            withExtendedLifetime(database) {}
        }  // closed here: SQLite checkpoints the log into the file and removes it
        if link(building, path) == 0 { return true }
        guard errno == EEXIST else {
            throw .cannotOpen(path: path, reason: "cannot create it: \(String(cString: strerror(errno)))")
        }
        return false
    }

    // MARK: Local writes

    /// Stores `value` under `suite`/`key`. Needs no peer and no daemon: it fails only for a name or value the
    /// store refuses (`validate`) or a disk that fails.
    @discardableResult
    public func set(_ value: Value, suite: String, key: String) throws(StoreError) -> Change {
        try write([.set(suite: suite, key: key, value: value)])[0]!
    }

    /// Writes a tombstone. Returns `nil` (and writes nothing) when there is no live value to delete.
    @discardableResult
    public func delete(suite: String, key: String) throws(StoreError) -> Change? {
        try write([.delete(suite: suite, key: key)])[0]
    }

    /// Applies local writes in one transaction, so many writes cost one fsync (group commit). Everything is
    /// validated first: one bad write refuses the whole batch and nothing is written. A delete of a key
    /// with no live value writes nothing and yields `nil`.
    ///
    /// Made the way `apply` makes a peer's batch: committed without its own fsync, watchers signalled, then
    /// the log synced before returning. Just as durable when it returns, but watchers — the daemon forwarding
    /// it to peers among them — read it one fsync earlier. A power cut in that window loses it together with
    /// everything logged after it (the WAL keeps a prefix), send horizons included: peers that read it send
    /// it back (entries of any origin are, PROTOCOL.md §6.6) and are resent this store's history (§6.3); its
    /// writer had no answer yet. If the sync fails, the error is thrown although the write is stored: it
    /// is not known to be on disk.
    ///
    /// Except when the store's clock runs ahead of this device's (a peer's clock was ahead, or ours stepped
    /// back): a version ticked on a wall time the device's clock has not reached could be ticked again,
    /// for another write, after a power cut took it with the clock's state — two writes with one version.
    /// Such a write is synced before anyone can read it, as every write was before.
    public func write(_ writes: [LocalWrite]) throws(StoreError) -> [Change?] {
        for write in writes { try Self.validate(write) }
        let visibleFirst = try database.unsyncedTransaction(rollingBackOnNil: { () throws(StoreError) -> [Change?]? in
            var aheadOfClock = false
            let changes = try writeInTransaction(writes, aheadOfClock: &aheadOfClock)
            return aheadOfClock ? nil : changes  // rolled back, and made again synced below
        })
        let changes: [Change?]
        if let visibleFirst {
            changes = visibleFirst
        } else {
            changes = try database.transaction(immediate: true) { () throws(StoreError) -> [Change?] in try writeInTransaction(writes) }
        }
        lastWriteWasSyncedBeforeVisible = visibleFirst == nil
        if changes.contains(where: { $0 != nil }) { didCommit?() }
        if visibleFirst != nil { try database.syncWriteAheadLog() }
        return changes
    }

    /// Whether the last `write` or `apply` was synced before it became visible (a version of ours ran ahead of
    /// the clock): for tests.
    private(set) var lastWriteWasSyncedBeforeVisible = false

    /// The body of `write`, for callers already inside a write transaction (`update`). The writes must be
    /// validated.
    func writeInTransaction(_ writes: [LocalWrite]) throws(StoreError) -> [Change?] {
        var aheadOfClock = false
        return try writeInTransaction(writes, aheadOfClock: &aheadOfClock)
    }

    /// `aheadOfClock`: set when a version was ticked on a wall time past this device's clock reading.
    func writeInTransaction(_ writes: [LocalWrite], aheadOfClock: inout Bool) throws(StoreError) -> [Change?] {
        var clock = HybridClock(last: try readClock(), maxForwardDriftMillis: maxForwardDriftMillis)
        var sequence = try lastSequence()
        var changes: [Change?] = []
        changes.reserveCapacity(writes.count)
        for write in writes {
            if case .delete(let suite, let key) = write {
                guard let current = try entry(suite: suite, key: key), !current.isDeleted else {
                    changes.append(nil)
                    continue
                }
            }
            let physical = physicalClock()
            let version = Version(hlc: clock.tick(physicalMillis: physical), origin: device)
            if version.hlc.wallMillis > physical { aheadOfClock = true }
            sequence += 1
            changes.append(try insert(Entry(suite: write.suite, key: write.key, value: write.value, version: version), at: sequence))
        }
        try writeClock(clock.last)
        try writeMetaInt("seq", sequence)
        return changes
    }

    // MARK: Remote entries

    /// Merges entries from a peer, in one transaction: all of them are durable together or none is.
    ///
    /// Durable when it returns (the session acknowledges the batch after that), but *visible* a little
    /// earlier: the transaction commits without its own fsync, watchers are signalled, and only then is the
    /// log synced. The sync then runs while the watchers read, which takes a whole disk flush off the
    /// latency from a write on one device to an app seeing it on another. If power fails in between, the
    /// batch is lost together with everything the log holds after it — the WAL's chained checksums keep
    /// a prefix of transactions — including the watermark and any send horizon raised to forward it, so
    /// the origin resends it and no peer trusts a history this store no longer has (PROTOCOL.md §6.3).
    /// Local writes are made the same way (`write`).
    ///
    /// `savingWatermark`: the peer's watermark this batch reaches, stored in the same transaction unless an
    /// entry was refused (`ReplicaStore.apply`); with no entries, stored alone.
    public func apply(_ entries: [Entry]) throws(StoreError) -> ApplyResult {
        try apply(entries, physicalMillis: physicalClock())
    }

    public func apply(_ entries: [Entry], physicalMillis now: Int64, savingWatermark watermark: PeerWatermark? = nil) throws(StoreError) -> ApplyResult {
        // Nothing to merge, nothing to commit: a peer's batch made only of our own echoes arrives empty, and
        // an empty transaction would still cost a commit and a sync.
        guard !entries.isEmpty else {
            if let watermark {
                try database.unsyncedTransaction { () throws(StoreError) in
                    try self.refuseUnlessPaired(watermark)
                    try self.saveWatermark(watermark.watermark, peer: watermark.peer)
                }
            }
            return ApplyResult()
        }
        let merge = { () throws(StoreError) -> ApplyResult in
            if let watermark { try self.refuseUnlessPaired(watermark) }
            var clock = HybridClock(last: try self.readClock(), maxForwardDriftMillis: self.maxForwardDriftMillis)
            let clockBefore = clock.last
            var sequence = try self.lastSequence()
            let result = try ApplyResult.merging(entries, clock: &clock, physicalMillis: now, device: self.device,
                                                 stored: { (entry) throws(StoreError) in try self.entry(suite: entry.suite, key: entry.key) }) { (entry) throws(StoreError) -> Change? in
                guard try self.insertIfWins(entry, at: sequence + 1) else { return nil }
                sequence += 1
                return Change(sequence: sequence, entry: entry)
            }
            if clock.last != clockBefore { try self.writeClock(clock.last) }
            if !result.stored.isEmpty { try self.writeMetaInt("seq", sequence) }
            if let watermark, result.refused.isEmpty { try self.saveWatermark(watermark.watermark, peer: watermark.peer) }
            return result
        }
        // A write of our own the merge made (`LatestFiring`) on a version ahead of this device's clock must be
        // synced before anyone reads it, as a local write must (`write` says why): then the batch is merged
        // again in a synced transaction.
        let visibleFirst = try database.unsyncedTransaction(rollingBackOnNil: { () throws(StoreError) -> ApplyResult? in
            let result = try merge()
            return result.kept.contains { $0.entry.version.hlc.wallMillis > now } ? nil : result
        })
        let result: ApplyResult
        if let visibleFirst { result = visibleFirst } else { result = try database.transaction(immediate: true, merge) }
        if !result.stored.isEmpty { didCommit?() }
        lastWriteWasSyncedBeforeVisible = visibleFirst == nil
        if visibleFirst != nil { try database.syncWriteAheadLog() }
        return result
    }

    /// Set by the daemon on the connections its sessions merge through: a batch whose peer was removed meanwhile
    /// is refused in the merge's own transaction, which the removal's is ordered with. The removal only told
    /// the daemon after its commit, and a batch being merged then landed after `peer remove` had returned
    /// (found by review: 7 of 12 tries during a catch-up).
    public var mergesOnlyFromPairedPeers = false

    private func refuseUnlessPaired(_ watermark: PeerWatermark) throws(StoreError) {
        guard mergesOnlyFromPairedPeers, try !isPaired(watermark.peer) else { return }
        throw .peerNoLongerPaired(watermark.peer.short)
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
        // Not synced on its own: a watermark lost to a power cut only makes the peer resend what we already
        // have (merging is idempotent), and the WAL keeps commits in order, so a watermark that survives
        // never claims entries that did not. That saves an fsync on every batch received.
        try database.unsyncedTransaction { () throws(StoreError) in try saveWatermark(watermark, peer: peer) }
    }

    /// The body of `setWatermark`, for callers already in a transaction (`apply`).
    private func saveWatermark(_ watermark: Watermark, peer: DeviceID) throws(StoreError) {
        let statement = try cached("""
            INSERT INTO watermarks(peer, store_id, sequence) VALUES (?1, ?2, ?3)
            ON CONFLICT(peer) DO UPDATE SET store_id = excluded.store_id, sequence = excluded.sequence
            """)
        statement.bind(1, peer.bytes)
        statement.bind(2, watermark.storeID)
        statement.bind(3, watermark.sequence)
        try statement.run()
    }

    public func sendHorizon(peer: DeviceID) throws(StoreError) -> Int64? {
        let statement = try cached("SELECT sequence FROM send_horizons WHERE peer = ?1")
        defer { statement.reset() }
        statement.bind(1, peer.bytes)
        guard try statement.step() else { return nil }
        return statement.int64(0)
    }

    /// Not synced on its own, like the watermark: a horizon lost to a power cut only makes the next session
    /// resend everything to that peer.
    public func setSendHorizon(_ sequence: Int64, peer: DeviceID) throws(StoreError) {
        let statement = try cached("""
            INSERT INTO send_horizons(peer, sequence) VALUES (?1, ?2)
            ON CONFLICT(peer) DO UPDATE SET sequence = max(sequence, excluded.sequence)
            """)
        statement.bind(1, peer.bytes)
        statement.bind(2, sequence)
        try database.unsyncedTransaction { () throws(StoreError) in try statement.run() }
    }

    // MARK: Reads

    /// The entry for a key, tombstones included.
    public func entry(suite: String, key: String) throws(StoreError) -> Entry? {
        let statement = try prepared(&entryStatement, "SELECT value, hlc_wall, hlc_logical, origin FROM entries WHERE suite = ?1 AND key = ?2")
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
        return try rows(of: suite, from: statement)
    }

    /// At most `limit` live entries of a suite with keys after `key` (nil: from the first), sorted by key: a
    /// suite read a page at a time, so that a million keys are never all in memory, and no read transaction is
    /// held between pages (a reader that stops while its output is not read would hold the log's checkpoints back).
    public func liveEntries(suite: String, after key: String?, limit: Int) throws(StoreError) -> [Entry] {
        let statement = try cached("SELECT value, hlc_wall, hlc_logical, origin, key FROM entries WHERE suite = ?1 AND key > ?2 AND value IS NOT NULL ORDER BY key LIMIT ?3")
        defer { statement.reset() }
        statement.bind(1, suite)
        statement.bind(2, key ?? "")
        statement.bind(3, Int64(limit))
        return try rows(of: suite, from: statement)
    }

    /// Live entries of `suite` whose key starts with `prefix` (which must end in an ASCII character below 0x7F),
    /// sorted by key: a range of the table's key, however large the suite.
    public func liveEntries(suite: String, keyPrefix prefix: String) throws(StoreError) -> [Entry] {
        guard let end = Self.endOfKeys(startingWith: prefix) else { return [] }
        let statement = try cached("SELECT value, hlc_wall, hlc_logical, origin, key FROM entries WHERE suite = ?1 AND key >= ?2 AND key < ?3 AND value IS NOT NULL ORDER BY key")
        defer { statement.reset() }
        statement.bind(1, suite)
        statement.bind(2, prefix)
        statement.bind(3, end)
        return try rows(of: suite, from: statement)
    }

    /// The entries a statement of the suite's rows yields (columns value, hlc_wall, hlc_logical, origin, key).
    private func rows(of suite: String, from statement: SQLiteStatement) throws(StoreError) -> [Entry] {
        var entries: [Entry] = []
        while try statement.step() {
            entries.append(try readEntry(statement, suite: suite, key: statement.string(4), firstColumn: 0))
        }
        return entries
    }

    /// Live entries of every suite whose key starts with `prefix` (which must end in an ASCII character below
    /// 0x7F), sorted by suite and key: the daemon's start-up search for notification requests.
    ///
    /// The table is keyed by suite, then key, so a filter on the key alone would read every row (at start-up,
    /// with a million keys, that cost a restarted daemon's catch-up 5 ms and filled its page cache). Instead it
    /// hops from suite to suite along the key (one seek each, `suites` below) and reads only the range of keys
    /// with the prefix in each: a few seeks per suite, whatever the number of keys.
    public func liveEntries(keyPrefix prefix: String) throws(StoreError) -> [Entry] {
        guard let end = Self.endOfKeys(startingWith: prefix) else { return [] }
        let statement = try cached(Self.everySuite + """
            SELECT e.value, e.hlc_wall, e.hlc_logical, e.origin, e.suite, e.key FROM suites
              JOIN entries e ON e.suite = suites.name AND e.key >= ?1 AND e.key < ?2
            WHERE e.value IS NOT NULL ORDER BY e.suite, e.key
            """)
        defer { statement.reset() }
        statement.bind(1, prefix)
        statement.bind(2, end)
        var entries: [Entry] = []
        while try statement.step() {
            entries.append(try readEntry(statement, suite: statement.string(4), key: statement.string(5), firstColumn: 0))
        }
        return entries
    }

    /// Every suite's name, one seek each (`suites(name)`, ending with a NULL): the start of the queries that
    /// hop from suite to suite instead of reading every row.
    private static let everySuite = """
        WITH RECURSIVE suites(name) AS (
          SELECT (SELECT suite FROM entries ORDER BY suite LIMIT 1)
          UNION ALL
          SELECT (SELECT suite FROM entries WHERE suite > name ORDER BY suite LIMIT 1) FROM suites WHERE name IS NOT NULL)

        """

    /// The keys that start with `prefix` are the range [prefix, this), compared as bytes: the prefix with its
    /// last byte raised by one. Nil unless that byte is ASCII below 0x7F.
    private static func endOfKeys(startingWith prefix: String) -> String? {
        guard let last = prefix.utf8.last, last < 0x7F else { return nil }
        return String(decoding: prefix.utf8.dropLast() + [last + 1], as: UTF8.self)
    }

    /// When set, `changes` leaves out a row it cannot decode (a damaged value or origin), reports it here, and
    /// goes on: a replication session then sends everything else instead of ending on that row for ever.
    /// Unset (the CLI's `list` and `watch`), such a row is an error naming the file and the key.
    public var skipDamagedRow: ((StoreError) -> Void)?

    /// Changes after `sequence`, oldest first, at most `limit`.
    public func changes(after sequence: Int64, limit: Int = 1000) throws(StoreError) -> [Change] {
        let statement = try prepared(&changesStatement, "SELECT value, hlc_wall, hlc_logical, origin, suite, key, seq FROM entries WHERE seq > ?1 ORDER BY seq LIMIT ?2")
        defer { statement.reset() }
        statement.bind(1, sequence)
        statement.bind(2, Int64(limit))
        var changes: [Change] = []
        // Consecutive changes mostly share their suite and writer: reuse the previous row's instead of
        // allocating the same string and device ID again for every row.
        var suite = ""
        var origin: DeviceID?
        while try statement.step() {
            if !statement.text(4, equals: suite) { suite = statement.string(4) }
            let entry: Entry
            do {
                entry = try readEntry(statement, suite: suite, key: statement.string(5), firstColumn: 0, lastOrigin: &origin)
            } catch {
                guard case .corrupt = error, let skipDamagedRow else { throw error }
                skipDamagedRow(error)
                continue
            }
            changes.append(Change(sequence: statement.int64(6), entry: entry))
        }
        return changes
    }

    /// The keys of the given suites changed after `sequence` (up to `through`), without reading values: how the
    /// daemon finds the few changes it reacts to (notification records, the balance) inside a large catch-up.
    public func changedKeys(after sequence: Int64, through: Int64, inSuites suites: [String]) throws(StoreError) -> [(suite: String, key: String)] {
        guard !suites.isEmpty, through > sequence else { return [] }
        let placeholders = (0..<suites.count).map { "?\($0 + 3)" }.joined(separator: ", ")
        let statement = try cached("SELECT suite, key FROM entries WHERE seq > ?1 AND seq <= ?2 AND suite IN (\(placeholders)) ORDER BY seq")
        defer { statement.reset() }
        statement.bind(1, sequence)
        statement.bind(2, through)
        for (index, suite) in suites.enumerated() { statement.bind(Int32(index + 3), suite) }
        var keys: [(suite: String, key: String)] = []
        while try statement.step() { keys.append((statement.string(0), statement.string(1))) }
        return keys
    }

    /// The keys of any suite that start with one of `prefixes` (each must end in an ASCII character below 0x7F)
    /// and changed after `sequence` (up to `through`), in the order they changed: how the daemon finds the
    /// selection blocks that changed.
    ///
    /// A few changes (one commit's) are read from the changes' range. Past that it hops from suite to suite as
    /// `liveEntries(keyPrefix:)` does and reads only the keys with each prefix, checking their sequence: a few
    /// seeks per suite, where reading the range would scan the whole store on the first change after a start
    /// (0.1 s at a million keys) and every catch-up batch in full.
    public func changedKeys(after sequence: Int64, through: Int64, withKeyPrefixes prefixes: [String]) throws(StoreError) -> [(suite: String, key: String)] {
        guard through > sequence else { return [] }
        var found: [(sequence: Int64, suite: String, key: String)] = []
        if through - sequence <= Self.changesReadInFull {
            let statement = try cached("SELECT seq, suite, key FROM entries WHERE seq > ?1 AND seq <= ?2 ORDER BY seq")
            defer { statement.reset() }
            statement.bind(1, sequence)
            statement.bind(2, through)
            while try statement.step() {
                let key = statement.string(2)
                // As bytes, as the hop below compares them (a prefix then a combining mark is one character).
                if prefixes.contains(where: { EntryName.starts(key, with: $0) }) { found.append((statement.int64(0), statement.string(1), key)) }
            }
        } else {
            // CROSS JOIN and the unary plus keep SQLite on this plan: left to itself it reads the sequence index.
            let statement = try cached(Self.everySuite + """
                SELECT e.seq, e.suite, e.key FROM suites
                  CROSS JOIN entries e ON e.suite = suites.name AND e.key >= ?1 AND e.key < ?2
                WHERE +e.seq > ?3 AND +e.seq <= ?4
                """)
            for prefix in prefixes {
                guard let end = Self.endOfKeys(startingWith: prefix) else { continue }
                defer { statement.reset() }
                statement.bind(1, prefix)
                statement.bind(2, end)
                statement.bind(3, sequence)
                statement.bind(4, through)
                while try statement.step() { found.append((statement.int64(0), statement.string(1), statement.string(2))) }
            }
            found.sort { $0.sequence < $1.sequence }
        }
        return found.map { ($0.suite, $0.key) }
    }

    /// Up to this many changes, `changedKeys(withKeyPrefixes:)` reads them all rather than hop from suite to suite.
    static let changesReadInFull: Int64 = 256

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

    public static func validate(_ write: LocalWrite) throws(StoreError) {
        try validate(suite: write.suite, key: write.key)
        guard let value = write.value else { return }
        guard value.isStorable else { throw .invalidEntry("numbers must be finite and dates within years 0000-9999 (rounded to the millisecond)") }
        let size = ValueCodec.encode(value).count
        guard size <= maxValueBytes else { throw .invalidEntry("value is \(size) bytes; the limit is \(maxValueBytes)") }
    }

    public static func validate(suite: String, key: String) throws(StoreError) {
        try validate(name: suite, what: "suite")
        try validate(name: key, what: "key")
    }

    private static func validate(name: String, what: String) throws(StoreError) {
        if let problem = EntryName.problem(name, what: what) { throw .invalidEntry(problem) }
    }

    // MARK: Rows

    private var statements: [String: SQLiteStatement] = [:]
    // The statements run once per entry, held rather than found by hashing their SQL text every time.
    private var insertStatement: SQLiteStatement?
    private var insertIfWinsStatement: SQLiteStatement?
    private var entryStatement: SQLiteStatement?
    private var changesStatement: SQLiteStatement?

    func cached(_ sql: String) throws(StoreError) -> SQLiteStatement {
        if let statement = statements[sql] { return statement }
        let statement = try database.prepare(sql)
        statements[sql] = statement
        return statement
    }

    /// The statement held in `slot`, prepared on first use.
    private func prepared(_ slot: inout SQLiteStatement?, _ sql: String) throws(StoreError) -> SQLiteStatement {
        if let statement = slot { return statement }
        let statement = try database.prepare(sql)
        slot = statement
        return statement
    }

    private func readEntry(_ statement: SQLiteStatement, suite: String, key: String, firstColumn c: Int32) throws(StoreError) -> Entry {
        var origin: DeviceID?
        return try readEntry(statement, suite: suite, key: key, firstColumn: c, lastOrigin: &origin)
    }

    /// `lastOrigin` is reused when the row's origin holds the same bytes, and replaced when not.
    private func readEntry(_ statement: SQLiteStatement, suite: String, key: String, firstColumn c: Int32,
                           lastOrigin: inout DeviceID?) throws(StoreError) -> Entry {
        var value: Value?
        if !statement.isNull(c) {
            do { value = try ValueCodec.decode(statement.bytes(c)) } catch {
                throw .corrupt(path: path, reason: "value of \(suite)/\(key) cannot be decoded: \(error)")
            }
        }
        let hlc = HLC(wallMillis: statement.int64(c + 1), logical: UInt32(truncatingIfNeeded: statement.int64(c + 2)))
        let origin: DeviceID
        if let last = lastOrigin, statement.bytes(c + 3, equal: last.bytes) {
            origin = last
        } else {
            guard let read = try? DeviceID(bytes: statement.bytes(c + 3)) else {
                throw .corrupt(path: path, reason: "origin of \(suite)/\(key) is not a device ID")
            }
            origin = read
            lastOrigin = read
        }
        return Entry(suite: suite, key: key, value: value, version: Version(hlc: hlc, origin: origin))
    }

    /// Stores an entry at a sequence; the caller advances the stored sequence counter once per transaction.
    private func insert(_ entry: Entry, at sequence: Int64) throws(StoreError) -> Change {
        let statement = try prepared(&insertStatement, """
            INSERT INTO entries(suite, key, value, hlc_wall, hlc_logical, origin, seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            ON CONFLICT(suite, key) DO UPDATE SET value = excluded.value, hlc_wall = excluded.hlc_wall,
              hlc_logical = excluded.hlc_logical, origin = excluded.origin, seq = excluded.seq
            """)
        bindEntry(entry, at: sequence, to: statement)
        try statement.run(clearingBindings: false)
        return Change(sequence: sequence, entry: entry)
    }

    /// Stores a remote entry at `sequence` if it wins over the stored one by last-writer-wins, deciding in SQL:
    /// one statement per entry, and the stored entry is never read back or decoded. Returns whether it won.
    ///
    /// The `WHERE` is `LastWriterWins.wins` spelled over the columns: a greater version `(hlc_wall,
    /// hlc_logical, origin)` wins (row values compare left to right; integers as numbers, the 32-byte origins
    /// as `memcmp`, like `DeviceID`'s bytewise order); on equal versions a live value beats a tombstone, and
    /// of two live values the greater encoding wins (blobs compare by `memcmp`, then length: Swift's
    /// `lexicographicallyPrecedes`; the stored blob is `ValueCodec`'s canonical encoding, as the core
    /// compares). `StoreMergeTests` checks it against the core on random and tied pairs.
    func insertIfWins(_ entry: Entry, at sequence: Int64) throws(StoreError) -> Bool {
        let statement = try prepared(&insertIfWinsStatement, """
            INSERT INTO entries(suite, key, value, hlc_wall, hlc_logical, origin, seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            ON CONFLICT(suite, key) DO UPDATE SET value = excluded.value, hlc_wall = excluded.hlc_wall,
              hlc_logical = excluded.hlc_logical, origin = excluded.origin, seq = excluded.seq
            WHERE (excluded.hlc_wall, excluded.hlc_logical, excluded.origin) > (entries.hlc_wall, entries.hlc_logical, entries.origin)
               OR ((excluded.hlc_wall, excluded.hlc_logical, excluded.origin) = (entries.hlc_wall, entries.hlc_logical, entries.origin)
                   AND excluded.value IS NOT NULL AND (entries.value IS NULL OR excluded.value > entries.value))
            """)
        // A peer's value gets the limit a local write gets (`validate`), checked here where it is encoded
        // anyway; throwing rolls the whole batch back. Without it a peer could store what no local write
        // may, and what this device could then not forward in a frame of its own.
        let encoded = entry.value.map(ValueCodec.encode)
        if let encoded, encoded.count > Self.maxValueBytes {
            throw .invalidEntry("value of \(entry.suite)/\(entry.key) is \(encoded.count) bytes; the limit is \(Self.maxValueBytes)")
        }
        bindEntry(entry, encodedValue: encoded, at: sequence, to: statement)
        try statement.run(clearingBindings: false)
        // 1 when inserted or updated; 0 when the conflict's WHERE kept the stored row.
        return database.changes == 1
    }

    private func bindEntry(_ entry: Entry, at sequence: Int64, to statement: SQLiteStatement) {
        bindEntry(entry, encodedValue: entry.value.map(ValueCodec.encode), at: sequence, to: statement)
    }

    private func bindEntry(_ entry: Entry, encodedValue: [UInt8]?, at sequence: Int64, to statement: SQLiteStatement) {
        statement.bind(1, entry.suite)
        statement.bind(2, entry.key)
        statement.bind(3, encodedValue)
        statement.bind(4, entry.version.hlc.wallMillis)
        statement.bind(5, Int64(entry.version.hlc.logical))
        statement.bind(6, entry.version.origin.bytes)
        statement.bind(7, sequence)
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

    func readMetaInt(_ name: String) throws(StoreError) -> Int64 {
        let statement = try cached("SELECT CAST(value AS INTEGER) FROM meta WHERE name = ?1")
        defer { statement.reset() }
        statement.bind(1, name)
        guard try statement.step() else { return 0 }
        return statement.int64(0)
    }

    func writeMetaInt(_ name: String, _ value: Int64) throws(StoreError) {
        let statement = try cached("INSERT INTO meta(name, value) VALUES (?1, ?2) ON CONFLICT(name) DO UPDATE SET value = excluded.value")
        statement.bind(1, name)
        statement.bind(2, value)
        try statement.run()
    }
}
