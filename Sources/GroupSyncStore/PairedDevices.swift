import GroupSyncCore

/// A device this one syncs with: its ID (the pinned certificate fingerprint), a name, and where to dial it.
public struct PairedDevice: Hashable, Sendable {
    public var id: DeviceID
    public var name: String
    /// `host:port`, or `[v6]:port`.
    public var address: String

    public init(id: DeviceID, name: String, address: String) {
        self.id = id
        self.name = name
        self.address = address
    }
}

/// The list of paired devices, kept in the home's SQLite file beside the store (a local table, never
/// replicated: who may connect is each device's own decision). On every change signal the daemon reads
/// the list's version, and the list again when that changed, so `peer add` and `peer remove` take effect at once.
extension Store {
    public func pairedDevices() throws(StoreError) -> [PairedDevice] {
        let statement = try cached("SELECT device, name, address FROM peers ORDER BY name, device")
        defer { statement.reset() }
        var devices: [PairedDevice] = []
        while try statement.step() {
            guard let id = try? DeviceID(bytes: statement.bytes(0)) else {
                throw .corrupt(path: path, reason: "a paired device has an ID that is not 32 bytes")
            }
            devices.append(PairedDevice(id: id, name: statement.string(1), address: statement.string(2)))
        }
        return devices
    }

    /// Adds or updates a paired device.
    public func pair(_ device: PairedDevice) throws(StoreError) {
        let statement = try cached("""
            INSERT INTO peers(device, name, address) VALUES (?1, ?2, ?3)
            ON CONFLICT(device) DO UPDATE SET name = excluded.name, address = excluded.address
            """)
        statement.bind(1, device.id.bytes)
        statement.bind(2, device.name)
        statement.bind(3, device.address)
        try database.transaction(immediate: true) { () throws(StoreError) in
            try statement.run()
            try bumpPairingVersion()
        }
        didCommit?()
    }

    /// Shows a paired device by the name it tells in its hello, unless the user gave it another: when it is
    /// still called by the start of its ID (paired without `--name`), or by the name it told before (so a
    /// device renamed with `init --name` is shown renamed on its peers; only the first name stuck before,
    /// found by review). The name told is kept per device in `meta` (`peer_name_told:`), where earlier
    /// groupsyncs ignore it; a store from before has none, and a shown name equal to the one told now was
    /// told then. `true` when the shown name changed. One transaction, so a `peer add` running meanwhile is
    /// never undone, and a name the user gave is never replaced.
    @discardableResult
    public func adoptName(_ name: String, for id: DeviceID) throws(StoreError) -> Bool {
        let keepTold = try cached("INSERT INTO meta(name, value) VALUES (?1, ?2) ON CONFLICT(name) DO UPDATE SET value = excluded.value")
        let show = try cached("UPDATE peers SET name = ?1 WHERE device = ?2")
        let adopted = try database.transaction(immediate: true) { () throws(StoreError) -> Bool in
            guard let (shown, told) = try shownAndToldName(of: id) else { return false }  // not paired (any more)
            guard shown == id.short || shown == (told ?? name) else { return false }
            if told != name {
                keepTold.bind(1, Self.toldNameKey(id))
                keepTold.bind(2, name)
                try keepTold.run()
            }
            guard shown != name else { return false }
            show.bind(1, name)
            show.bind(2, id.bytes)
            try show.run()
            try bumpPairingVersion()
            return true
        }
        if adopted { didCommit?() }
        return adopted
    }

    static func toldNameKey(_ id: DeviceID) -> String { "peer_name_told:" + id.description }

    /// The name a paired device is shown by, and the name it last told (nil if none is kept); nil if not paired.
    private func shownAndToldName(of id: DeviceID) throws(StoreError) -> (shown: String, told: String?)? {
        let statement = try cached("SELECT p.name, CAST(m.value AS TEXT) FROM peers p LEFT JOIN meta m ON m.name = ?2 WHERE p.device = ?1")
        defer { statement.reset() }
        statement.bind(1, id.bytes)
        statement.bind(2, Self.toldNameKey(id))
        guard try statement.step() else { return nil }
        return (statement.string(0), statement.isNull(1) ? nil : statement.string(1))
    }

    /// Whether `id` is paired now, as this connection reads the store (in a transaction: as of its start).
    func isPaired(_ id: DeviceID) throws(StoreError) -> Bool {
        let statement = try cached("SELECT 1 FROM peers WHERE device = ?1")
        defer { statement.reset() }
        statement.bind(1, id.bytes)
        return try statement.step()
    }

    /// A counter that moves whenever the paired devices change, so the daemon can tell at the cost of one
    /// small read whether it must re-read them after a commit.
    public func pairingVersion() throws(StoreError) -> Int64 { try readMetaInt("pairing_version") }

    /// The last sequence and the pairing version in one read: what the daemon looks at after every commit.
    public func headAndPairingVersion() throws(StoreError) -> (lastSequence: Int64, pairingVersion: Int64) {
        let statement = try cached("""
            SELECT (SELECT CAST(value AS INTEGER) FROM meta WHERE name = 'seq'),
                   (SELECT CAST(value AS INTEGER) FROM meta WHERE name = 'pairing_version')
            """)
        defer { statement.reset() }
        guard try statement.step() else { return (0, 0) }
        return (statement.int64(0), statement.int64(1))
    }

    private func bumpPairingVersion() throws(StoreError) {
        try writeMetaInt("pairing_version", try readMetaInt("pairing_version") + 1)
    }

    /// Removes a paired device; `false` if it was not paired.
    @discardableResult
    public func unpair(_ id: DeviceID) throws(StoreError) -> Bool {
        let statement = try cached("DELETE FROM peers WHERE device = ?1")
        statement.bind(1, id.bytes)
        let removed = try database.transaction(immediate: true) { () throws(StoreError) -> Bool in
            try statement.run()
            guard database.changes > 0 else { return false }
            try forgetSyncStatus(id)
            try forgetToldName(id)
            try bumpPairingVersion()
            return true
        }
        if removed { didCommit?() }
        return removed
    }

    private func forgetToldName(_ id: DeviceID) throws(StoreError) {
        let statement = try cached("DELETE FROM meta WHERE name = ?1")
        statement.bind(1, Self.toldNameKey(id))
        try statement.run()
    }
}
