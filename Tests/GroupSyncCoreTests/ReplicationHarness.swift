@testable import GroupSyncCore

/// An in-test loopback network for replication: nodes (a store, a physical clock offset and a monotonic
/// clock) joined by links (one TCP connection each, carrying a session at both ends). Everything is deterministic; delivery
/// order, chunking and faults come from a seeded generator when one is given.
final class ReplicationNode {
    let name: String
    let device: DeviceID
    var store: MemoryReplicaStore
    /// This node's physical clock minus the network's time. Changing it steps the node's wall clock; its
    /// monotonic clock runs on regardless.
    var clockOffsetMillis: Int64
    /// When the node's monotonic clock read 0, in the network's time: long before the network began, and
    /// differently for each node, so that no reading of it could pass for a wall time or for another node's.
    var bootedAtMillis: Int64 = 0

    init(_ name: String, index: Int, clockOffsetMillis: Int64 = 0, maxDriftMillis: Int64 = HybridClock.defaultMaxForwardDriftMillis) {
        self.name = name
        self.device = ReplicationFixtures.device(index)
        self.store = MemoryReplicaStore(device: device, storeID: "\(name)-store-1", maxForwardDriftMillis: maxDriftMillis)
        self.clockOffsetMillis = clockOffsetMillis
    }

    /// Replaces the store by an empty one with a new store ID, as a reinstall would.
    func recreateStore(storeID: String) {
        store = MemoryReplicaStore(device: device, storeID: storeID, maxForwardDriftMillis: store.clock.maxForwardDriftMillis)
    }
}

/// One connection between two nodes. Side 0 is `nodes.0`, side 1 is `nodes.1`.
final class ReplicationLink {
    let nodes: (ReplicationNode, ReplicationNode)
    var configuration: SessionConfiguration
    var sessions: [PeerSession?] = [nil, nil]
    /// Byte chunks in flight *to* each side.
    var inFlight: [[[UInt8]]] = [[], []]
    /// Entries carried by `changes` frames *to* each side, over the link's whole life.
    var entriesDelivered = [0, 0]
    var framesSent: [[Message]] = [[], []]
    var closeReasons: [[CloseReason]] = [[], []]
    var logs: [String] = []
    /// When held, frames to that side wait (to test flow control).
    var held = [false, false]

    init(_ a: ReplicationNode, _ b: ReplicationNode, configuration: SessionConfiguration = SessionConfiguration()) {
        nodes = (a, b)
        self.configuration = configuration
    }

    func node(_ side: Int) -> ReplicationNode { side == 0 ? nodes.0 : nodes.1 }
    var isUp: Bool { sessions[0] != nil || sessions[1] != nil }
    func isEstablished() -> Bool { sessions.allSatisfy { $0?.phase == .established } }
}

final class ReplicationNetwork {
    var now: Int64
    var nodes: [ReplicationNode] = []
    var links: [ReplicationLink] = []

    init(now: Int64 = 1_700_000_000_000) { self.now = now }

    func physical(_ node: ReplicationNode) -> Int64 { now + node.clockOffsetMillis }

    /// What the node's monotonic clock reads now.
    func monotonic(_ node: ReplicationNode) -> Int64 { now - node.bootedAtMillis }

    /// Both of the node's clocks, as its shell hands them to a session.
    func time(_ node: ReplicationNode) -> SessionTime { SessionTime(monotonicMillis: monotonic(node), wallMillis: physical(node)) }

    @discardableResult
    func addNode(_ name: String, clockOffsetMillis: Int64 = 0) -> ReplicationNode {
        let node = ReplicationNode(name, index: nodes.count, clockOffsetMillis: clockOffsetMillis)
        node.bootedAtMillis = now - Int64(nodes.count + 1) * 3_600_000
        nodes.append(node)
        return node
    }

    @discardableResult
    func link(_ a: ReplicationNode, _ b: ReplicationNode, configuration: SessionConfiguration = SessionConfiguration()) -> ReplicationLink {
        let link = ReplicationLink(a, b, configuration: configuration)
        links.append(link)
        return link
    }

    /// A new link, connected, with the handshake and catch-up delivered.
    func connected(_ a: ReplicationNode, _ b: ReplicationNode, configuration: SessionConfiguration = SessionConfiguration()) -> ReplicationLink {
        let link = link(a, b, configuration: configuration)
        connect(link)
        runUntilQuiet()
        return link
    }

    // MARK: Connections

    func connect(_ link: ReplicationLink) {
        precondition(!link.isUp)
        link.inFlight = [[], []]
        for side in 0..<2 {
            let me = link.node(side), other = link.node(1 - side)
            link.sessions[side] = PeerSession(peer: other.device, deviceName: me.name, configuration: link.configuration)
        }
        for side in 0..<2 {
            let me = link.node(side)
            let outputs = link.sessions[side]!.start(at: time(me), store: me.store)
            route(outputs, from: side, on: link)
        }
    }

    /// The connection breaks: whatever was in flight is lost, both ends drop their sessions.
    func disconnect(_ link: ReplicationLink) {
        link.sessions = [nil, nil]
        link.inFlight = [[], []]
    }

    // MARK: Events

    func set(_ node: ReplicationNode, _ key: String, _ value: Value, suite: String = "group.test") {
        node.store.set(value, suite: suite, key: key, physicalMillis: physical(node))
        notifyLocalChange(node, except: nil)
    }

    func delete(_ node: ReplicationNode, _ key: String, suite: String = "group.test") {
        if node.store.delete(suite: suite, key: key, physicalMillis: physical(node)) != nil { notifyLocalChange(node, except: nil) }
    }

    func notifyLocalChange(_ node: ReplicationNode, except: ReplicationLink?) {
        for link in links where link !== except {
            for side in 0..<2 where link.node(side) === node && link.sessions[side] != nil {
                let outputs = link.sessions[side]!.localChangesAvailable(at: time(node), store: node.store)
                route(outputs, from: side, on: link)
            }
        }
    }

    /// Carries out a session's outputs as the daemon's shell would.
    func route(_ outputs: [SessionOutput], from side: Int, on link: ReplicationLink) {
        for output in outputs {
            switch output {
            case .send(let bytes):
                link.inFlight[1 - side].append(bytes)
                let frame = Frame(type: bytes[4], payload: Array(bytes[5...]))
                // `changes` is laid out in the version the sending session negotiated.
                let version = link.sessions[side]?.negotiatedVersion ?? ProtocolVersion.original
                if let message = try? MessageCodec.decode(frame, version: version) {
                    link.framesSent[side].append(message)
                    if case .changes(let batch) = message { link.entriesDelivered[1 - side] += batch.changes.count }
                }
            case .close(let reason):
                if var session = link.sessions[side], session.hasSendHorizonToSave { _ = session.saveSendHorizon(store: link.node(side).store) }
                link.closeReasons[side].append(reason)
                link.sessions[side] = nil
                // The other end sees the connection close once it has read what was sent before.
                link.inFlight[side] = []
                closeIfBothGone(link)
            case .log(let line):
                link.logs.append("\(link.node(side).name): \(line)")
            case .applied:
                notifyLocalChange(link.node(side), except: link)
            }
        }
        if link.sessions[side]?.hasSendHorizonToSave == true {
            route(link.sessions[side]!.saveSendHorizon(store: link.node(side).store), from: side, on: link)
        }
    }

    /// Delivers one queued chunk to `side`, split at `splitAt` if given (the rest stays queued first).
    func deliver(_ link: ReplicationLink, to side: Int, splitAt: Int? = nil) {
        guard !link.inFlight[side].isEmpty else { return }
        var chunk = link.inFlight[side].removeFirst()
        if let splitAt, splitAt > 0, splitAt < chunk.count {
            link.inFlight[side].insert(Array(chunk[splitAt...]), at: 0)
            chunk = Array(chunk[..<splitAt])
        }
        guard link.sessions[side] != nil else {
            closeIfBothGone(link)
            return
        }
        let node = link.node(side)
        let outputs = link.sessions[side]!.receive(bytes: chunk, at: time(node), store: node.store)
        route(outputs, from: side, on: link)
        closeIfBothGone(link)
    }

    /// A session that closed leaves the other end with EOF once its queue is read: it drops its session too.
    private func closeIfBothGone(_ link: ReplicationLink) {
        for side in 0..<2 where link.sessions[1 - side] == nil && link.inFlight[side].isEmpty && link.sessions[side] != nil {
            link.sessions[side] = nil
        }
    }

    /// Delivers everything in flight (FIFO per direction), until the network is quiet.
    func runUntilQuiet(maxSteps: Int = 1_000_000) {
        for _ in 0..<maxSteps {
            guard let (link, side) = nextDelivery() else { return }
            deliver(link, to: side)
        }
        fatalError("network did not go quiet")
    }

    private func nextDelivery() -> (ReplicationLink, Int)? {
        for link in links {
            for side in 0..<2 where !link.inFlight[side].isEmpty && !link.held[side] { return (link, side) }
        }
        return nil
    }

    /// Advances time to `time`, firing every session deadline on the way, delivering traffic at each stop.
    /// A session whose tick leaves its deadline where it was would spin here forever; `maxStops` turns that
    /// into a failure.
    func advance(to time: Int64, maxStops: Int = 1_000_000) {
        runUntilQuiet()
        for stop in 0... {
            // Deadlines are on each node's monotonic clock.
            let deadlines = links.flatMap { link in
                (0..<2).compactMap { side in link.sessions[side]?.nextDeadline.map { $0 + link.node(side).bootedAtMillis } }
            }
            guard let next = deadlines.min(), next <= time else { break }
            guard stop < maxStops else { fatalError("session deadlines did not move past \(next) ms") }
            now = max(now, next)
            tickAll()
            runUntilQuiet()
        }
        now = time
        tickAll()
        runUntilQuiet()
    }

    func tickAll() {
        for link in links {
            for side in 0..<2 where link.sessions[side] != nil {
                let outputs = link.sessions[side]!.tick(at: self.time(link.node(side)))
                route(outputs, from: side, on: link)
            }
        }
    }
}

extension SessionTime {
    /// Both clocks reading the same, for scripted sessions that only care about the intervals between events.
    static func both(_ millis: Int64) -> SessionTime { SessionTime(monotonicMillis: millis, wallMillis: millis) }
}

/// Helpers shared by the replication tests.
enum ReplicationFixtures {
    static func device(_ n: Int) -> DeviceID {
        try! DeviceID(bytes: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ n &* 31 &+ 1) })
    }

    static func entry(_ key: String, _ value: Value?, wall: Int64, logical: UInt32 = 0, origin: Int = 0, suite: String = "group.test") -> Entry {
        Entry(suite: suite, key: key, value: value, version: Version(hlc: HLC(wallMillis: wall, logical: logical), origin: device(origin)))
    }

    /// Every entry of every node equal to the first's.
    static func converged(_ nodes: [ReplicationNode]) -> Bool {
        nodes.dropFirst().allSatisfy { $0.store.entries == nodes[0].store.entries }
    }
}
