import GroupSyncCore

/// What `groupsync status` shows, from the running daemon or, when none runs, from the home alone.
public struct StatusReport: Sendable {
    public struct Peer: Sendable {
        public var id: DeviceID
        public var name: String
        public var address: String
        public var connected: Bool
        public var lastSyncMillis: Int64?
        public var clockOffsetMillis: Int64?
        /// Our changes the peer has not acknowledged; `nil` when unknown (not seen since the daemon started).
        public var pendingChanges: Int?
        /// Why the last connection attempt or session with the peer failed (a refused dial, a clock too far off,
        /// a full disk); nil while connected, after a session that ended without failing, and when the daemon
        /// has not tried since it started.
        public var lastError: String?
        /// The other end of the connection while connected: `address` is where we dial the peer, but a peer that
        /// dialed in comes from an address of its own (its machine's, and a port of the moment).
        public var remoteAddress: String?

        public init(id: DeviceID, name: String, address: String, connected: Bool, lastSyncMillis: Int64?, clockOffsetMillis: Int64?,
                    pendingChanges: Int?, lastError: String? = nil, remoteAddress: String? = nil) {
            self.id = id
            self.name = name
            self.address = address
            self.connected = connected
            self.lastSyncMillis = lastSyncMillis
            self.clockOffsetMillis = clockOffsetMillis
            self.pendingChanges = pendingChanges
            self.lastError = lastError
            self.remoteAddress = remoteAddress
        }
    }

    public var device: DeviceID
    public var name: String
    /// Where the daemon listens: the first of `listenAddresses`.
    public var listen: String?
    /// Every address the daemon listens on, numeric (a name given to `--listen` may have several).
    public var listenAddresses: [String]
    public var running: Bool
    /// False when a daemon runs (it holds the home's lock) but did not answer: stopped, or swamped. The peers
    /// are then as the daemon last saved them.
    public var answering: Bool
    public var peers: [Peer]

    public init(device: DeviceID, name: String, listen: String?, listenAddresses: [String]? = nil, running: Bool,
                answering: Bool = true, peers: [Peer]) {
        self.device = device
        self.name = name
        self.listen = listen
        self.listenAddresses = listenAddresses ?? listen.map { [$0] } ?? []
        self.running = running
        self.answering = answering
        self.peers = peers
    }

    public var json: String {
        var object = JSONObject()
        object.add("id", device.description)
        object.add("name", name)
        object.addRaw("listen", json: listen.map { JSONWriter.string(for: .string($0)) } ?? "null")
        object.addRaw("listenAddresses", json: "[" + listenAddresses.map { JSONWriter.string(for: .string($0)) }.joined(separator: ",") + "]")
        object.add("running", running)
        object.add("answering", running && answering)
        let peerObjects = peers.map { peer -> String in
            var p = JSONObject()
            p.add("id", peer.id.description)
            p.add("name", peer.name)
            p.add("address", peer.address)
            p.add("connected", peer.connected)
            p.addRaw("lastSync", json: peer.lastSyncMillis.map { JSONWriter.string(for: .string(ISO8601.format(secondsSince1970: Double($0) / 1000))) } ?? "null")
            p.addRaw("lastSyncMillis", json: peer.lastSyncMillis.map { String($0) } ?? "null")
            p.addRaw("clockOffsetMillis", json: peer.clockOffsetMillis.map { String($0) } ?? "null")
            p.addRaw("pendingChanges", json: peer.pendingChanges.map { String($0) } ?? "null")
            p.addRaw("lastError", json: peer.lastError.map { JSONWriter.string(for: .string($0)) } ?? "null")
            p.addRaw("remoteAddress", json: peer.remoteAddress.map { JSONWriter.string(for: .string($0)) } ?? "null")
            return p.text
        }
        object.addRaw("peers", json: "[" + peerObjects.joined(separator: ",") + "]")
        return object.text
    }

    public var text: String {
        let daemon = !running ? "not running"
            : answering ? "running, listening on \(listenAddresses.isEmpty ? listen ?? "?" : listenAddresses.joined(separator: " and "))"
            : "running, but not answering (stopped or busy); peers as it last saved them"
        var lines = ["device   \(device)  \(name)", "daemon   " + daemon]
        if peers.isEmpty { lines.append("peers    none (pair one with 'groupsync peer add')") }
        for peer in peers {
            // Names, addresses and errors may hold a peer's text: printed as it came, it could drive the terminal.
            var line = "peer     \(peer.id.short)  \(PeerText.printable(peer.name))  \(PeerText.printable(peer.address))  "
                + (peer.connected ? "connected" : "disconnected")
            if let remote = peer.remoteAddress, remote != peer.address { line += " from \(PeerText.printable(remote))" }
            if let last = peer.lastSyncMillis { line += "  last sync \(ISO8601.format(secondsSince1970: Double(last) / 1000))" }
            if let offset = peer.clockOffsetMillis { line += "  clock offset \(offset) ms" }
            if let pending = peer.pendingChanges { line += "  \(pending) pending" }
            lines.append(line)
            if let error = peer.lastError { lines.append("         last error: \(PeerText.printable(error))") }
        }
        return lines.joined(separator: "\n")
    }
}
