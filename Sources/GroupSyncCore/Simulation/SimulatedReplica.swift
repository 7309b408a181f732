/// One device in a simulation: its store (the durable part) and what the simulator knows about its
/// machine — whether it is up, how wrong its clock is, which side of a partition it is on.
public final class SimulatedReplica {
    public let index: Int
    public let name: String
    public let device: DeviceID
    /// Replaced by a store restored from `durableState` when the replica crashes.
    public internal(set) var store: MemoryReplicaStore
    let time: SimulationTime

    /// The physical clock minus the network's time: a lasting skew plus, while it lasts, a jump.
    var skewMillis: Int64
    var jumpMillis: Int64 = 0
    public var clockOffsetMillis: Int64 { skewMillis + jumpMillis }
    /// What this replica's wall clock reads now.
    public var physicalMillis: Int64 { time.now + clockOffsetMillis }
    /// When the machine last booted, in the network's time: its monotonic clock counts from there, as
    /// CLOCK_BOOTTIME does, and no clock jump or step moves it.
    var bootedAtMillis: Int64
    /// What this replica's monotonic clock reads now: nothing like its wall clock, so a session that mixed
    /// the two would go wrong at once, not only when a clock jumps.
    public var monotonicMillis: Int64 { time.now - bootedAtMillis }
    /// Both readings, as the daemon hands them to a session.
    public var sessionTime: SessionTime { SessionTime(monotonicMillis: monotonicMillis, wallMillis: physicalMillis) }

    /// The devices this one is paired with: every other replica of the run.
    public internal(set) var peers: Set<DeviceID> = []
    /// Whether this replica's store has caught up with each peer at least once, as `Store.updateBalance`
    /// judges before the balance may be founded here.
    public var hasCaughtUpWithEveryPeer: Bool { peers.allSatisfy { store.hasCaughtUp(peer: $0) } }

    /// The machine is on: its apps can write.
    public internal(set) var deviceUp = true
    /// The daemon runs: it can hold sessions.
    public internal(set) var daemonUp = true
    /// Replicas reach each other only within the same island.
    var island = 0
    /// Set when a crash should strike in the middle of this replica's next session event.
    var pendingCrash: CrashKind?
    /// Bumped at every crash, so a restart scheduled for an earlier life is ignored.
    var life = 0
    /// Bumped when a power cut takes history this replica had already shown its peers (positions they may
    /// have read and acknowledged now hold other writes, or nothing).
    var rollbacks = 0
    var notifyScheduled = false
    /// The state before the current event, for the checker self-test that loses acknowledged writes.
    var previousState: MemoryReplicaStore.DurableState?

    init(index: Int, device: DeviceID, storeID: String, skewMillis: Int64, time: SimulationTime) {
        self.index = index
        self.name = "r\(index)"
        self.device = device
        self.store = MemoryReplicaStore(device: device, storeID: storeID)
        self.skewMillis = skewMillis
        self.time = time
        // Up for a while before the run, each for a different while.
        self.bootedAtMillis = time.now - Int64(index + 1) * 3_600_000
    }
}

/// The network's clock, shared by the replicas so each can read its own skewed wall clock.
final class SimulationTime {
    var now: Int64
    init(now: Int64) { self.now = now }
}

enum CrashKind {
    /// Power loss: the apps stop writing too.
    case device
    /// kill -9 of the daemon: the apps keep writing to the store meanwhile.
    case daemon
}

/// One TCP connection slot between two replicas: at most one connection at a time, redialed with the
/// daemon's backoff when it ends. Side 0 is the replica with the lower index.
final class SimulatedLink {
    let index: Int
    let ends: [Int]
    let latencyMillis: Int64

    /// Bumped for every new connection, so events scheduled for an older one are ignored.
    var generation = 0
    /// Whether each end still has the connection open.
    var open = [false, false]
    var sessions: [PeerSession?] = [nil, nil]
    /// Packets travelling *to* each side, in arrival order (TCP keeps order within a direction).
    var queues: [[Packet]] = [[], []]
    var lastArrival: [Int64] = [0, 0]
    var deliveryAt: [Int64?] = [nil, nil]
    var timerAt: [Int64?] = [nil, nil]
    /// When each side last got bytes from the other (or the connection began): the checker's measure of
    /// real silence, to hold the sessions' dead-peer timing to.
    var lastReceivedAt: [Int64] = [0, 0]
    var connectedAt: Int64 = 0
    /// Each side's peer's `rollbacks` when this connection began: an `ack` on it speaks of that history.
    var peerRollbacks = [0, 0]
    /// A duplicate or reordered frame went over this connection: protocol errors are expected on it.
    var tainted = false
    var backoff = ReconnectBackoff()
    var dialAt: Int64?

    init(index: Int, ends: [Int], latencyMillis: Int64) {
        self.index = index
        self.ends = ends
        self.latencyMillis = latencyMillis
    }

    var isConnected: Bool { open[0] || open[1] }

    func side(of replica: Int) -> Int? { ends.firstIndex(of: replica) }

    struct Packet {
        var arrival: Int64
        var kind: Kind
        enum Kind {
            case bytes([UInt8])
            /// The other end closed the connection after writing what came before.
            case fin
            /// The other end vanished (crash, reset): the connection is gone.
            case reset
        }
    }
}
