import GroupSyncCore

/// What the daemon last knew of each paired device's session (last sync, clock offset, and how many changes
/// were pending for it, counted at which head), kept when a session ends so that `status` still shows them
/// after the daemon restarts, and with no daemon running. Without it a restart forgot that changes were
/// waiting for a device that was away.
///
/// Local bookkeeping, never replicated, saved without an fsync: a status lost to a power cut only shows an
/// older one. One row per device in the `meta` table rather than a table of its own, so that the schema
/// does not change and earlier groupsyncs, which ignore these rows, keep opening the store.
extension Store {
    private static let syncStatusPrefix = "peer_status:"

    private static func syncStatusName(_ peer: DeviceID) -> String { syncStatusPrefix + peer.description }

    /// Keeps `status` for its peer, if that device is still paired (one unpaired meanwhile starts afresh).
    public func saveSyncStatus(_ status: SessionStatus) throws(StoreError) {
        var fields: [String: Value] = ["pendingCount": .int(Int64(status.pendingCount))]
        if let lastSync = status.lastSyncMillis { fields["lastSyncMillis"] = .int(lastSync) }
        if let offset = status.clockOffsetMillis { fields["clockOffsetMillis"] = .int(offset) }
        if let head = status.pendingCountedAtHead { fields["pendingCountedAtHead"] = .int(head) }
        let statement = try cached("""
            INSERT INTO meta(name, value) SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM peers WHERE device = ?3)
            ON CONFLICT(name) DO UPDATE SET value = excluded.value
            """)
        statement.bind(1, Self.syncStatusName(status.peer))
        statement.bind(2, JSONWriter.string(for: .dictionary(fields)))
        statement.bind(3, status.peer.bytes)
        try database.unsyncedTransaction { () throws(StoreError) in try statement.run() }
    }

    /// The kept statuses of paired devices. A row that does not read as one is left out: it is bookkeeping
    /// for display, and `status` then shows that device's fields as unknown rather than failing.
    public func savedSyncStatuses() throws(StoreError) -> [DeviceID: SessionStatus] {
        let paired = Set(try pairedDevices().map(\.id))
        // A range on the primary key (from the prefix up to the prefix with its last ':' as ';', the next
        // character), not LIKE, which would scan the whole table.
        let statement = try cached("SELECT name, CAST(value AS TEXT) FROM meta WHERE name >= ?1 AND name < ?2")
        defer { statement.reset() }
        statement.bind(1, Self.syncStatusPrefix)
        statement.bind(2, String(Self.syncStatusPrefix.dropLast()) + ";")
        var statuses: [DeviceID: SessionStatus] = [:]
        while try statement.step() {
            let name = statement.string(0)
            guard let peer = try? DeviceID(parsing: String(name.dropFirst(Self.syncStatusPrefix.count))), paired.contains(peer),
                  case .dictionary(let fields)? = try? JSONParser.parse(statement.string(1)),
                  case .int(let pendingCount)? = fields["pendingCount"], pendingCount >= 0 else { continue }
            func int(_ name: String) -> Int64? { if case .int(let value)? = fields[name] { return value }; return nil }
            statuses[peer] = SessionStatus(rememberedFor: peer, lastSyncMillis: int("lastSyncMillis"), clockOffsetMillis: int("clockOffsetMillis"),
                                           pendingCount: Int(clamping: pendingCount), pendingCountedAtHead: int("pendingCountedAtHead"))
        }
        return statuses
    }

    /// Forgets `peer`'s kept status, and that we caught up with it; for `unpair`, inside its transaction.
    func forgetSyncStatus(_ peer: DeviceID) throws(StoreError) {
        let statement = try cached("DELETE FROM meta WHERE name IN (?1, ?2)")
        statement.bind(1, Self.syncStatusName(peer))
        statement.bind(2, Self.caughtUpName(peer))
        try statement.run()
    }

    // MARK: Caught up once

    private static func caughtUpName(_ peer: DeviceID) -> String { "caught_up:" + peer.description }

    /// Whether this store has read `peer`'s history up to the head the peer announced, at least once
    /// (`ReplicaStore.hasCaughtUp`). A row of `meta`, like the statuses, so the schema does not change.
    public func hasCaughtUp(peer: DeviceID) throws(StoreError) -> Bool {
        let statement = try cached("SELECT 1 FROM meta WHERE name = ?1")
        defer { statement.reset() }
        statement.bind(1, Self.caughtUpName(peer))
        return try statement.step()
    }

    /// Saved without an fsync: lost to a power cut, it only waits for the next catch-up.
    public func recordCaughtUp(peer: DeviceID) throws(StoreError) {
        let statement = try cached("INSERT INTO meta(name, value) VALUES (?1, 1) ON CONFLICT(name) DO NOTHING")
        statement.bind(1, Self.caughtUpName(peer))
        try database.unsyncedTransaction { () throws(StoreError) in try statement.run() }
    }
}
