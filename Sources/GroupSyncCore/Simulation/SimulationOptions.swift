/// What one simulated run does: how many replicas, how much work, and which faults at what rates.
///
/// Event rates are *expected events per simulated minute* for the whole cluster; frame faults are
/// probabilities per delivered frame. The defaults are the CI mix: every fault kind, often enough that each
/// seed sees several of each, while clocks stay close enough (±2 minutes each) that every pair can sync.
public struct SimulationOptions: Sendable, Equatable {
    /// Replicas per seed; a range picks a size per seed.
    public var replicas: ClosedRange<Int> = 3...7
    /// Local operations (writes, deletes, … from every workload) per seed, spread over the fault phase.
    public var operations = 120
    /// How long faults and operations go on, in simulated milliseconds; then everything heals.
    public var faultMillis: Int64 = 15 * 60_000
    /// After healing, how long the replicas get to converge before the seed counts as failed.
    public var settleLimitMillis: Int64 = 60 * 60_000

    // MARK: Network
    /// Partitions (the replicas split into 2 or 3 islands that cannot reach each other) per minute.
    public var partitionRate = 0.3
    /// How long a partition lasts, at most (at least a tenth of it).
    public var maxPartitionMillis: Int64 = 4 * 60_000
    /// A frame is lost: its connection breaks (TCP reset) and is redialed with backoff.
    public var dropRate = 0.004
    /// A frame is delivered twice. TCP never does this; it stands for a careless peer. Sessions must refuse
    /// or tolerate it, and nothing may be lost either way.
    public var duplicateRate = 0.001
    /// A frame overtakes the one before it on the same connection (again a careless peer, not TCP).
    public var reorderRate = 0.001
    /// A frame is held up (and the ones behind it, as TCP's head-of-line blocking does).
    public var delayRate = 0.01
    /// The longest such hold-up: past the 90 s dead-peer timeout, so some sessions give up on their peer.
    public var maxDelayMillis: Int64 = 120_000
    /// One-way latency of a link, at most (each link draws its own).
    public var maxLatencyMillis: Int64 = 80

    // MARK: Replicas
    /// Crashes (kill -9 or power loss) per minute; a crashed replica restarts from its durable state only.
    public var crashRate = 0.2
    /// How long a crashed replica stays down, at most.
    public var maxDowntimeMillis: Int64 = 3 * 60_000
    /// Stores moved aside per minute (a damaged store replaced, an app reinstalled): the device keeps its ID
    /// but starts an empty store with a new store ID, which its peers must read afresh and refill. Only a
    /// store that holds nothing its peers lack is reset, so no acknowledged write is lost by it.
    public var storeResetRate = 0.05
    /// Of the key-value writes, and of the session events that apply a peer's batch, the share struck by a
    /// power cut after the write (or batch) became visible — and the daemon forwarded it — but before its
    /// fsync ended (`Store.write`, `Store.apply`): the device loses it, with the send horizons raised to
    /// forward it; nobody was answered, and it lives on only where a peer read it (or at its origin).
    public var visibleWriteLossRate = 0.03

    // MARK: Clocks
    /// Each replica's physical clock is off by up to this much, either way; re-drawn now and then.
    public var maxSkewMillis: Int64 = 2 * 60_000
    /// Clock jumps per minute: a replica's clock steps 6–10 minutes ahead or back (past the 5-minute bound,
    /// so its sessions are refused and its writes carry odd timestamps), and is set right later.
    public var jumpRate = 0.1

    // MARK: Checker self-test
    /// Breaks durability on purpose: a crash also loses the last event's transactions although its
    /// acknowledgements went out. Only for proving that the checker notices; never on in a real run.
    public var loseAcknowledgedWritesOnCrash = false
    /// Breaks the send horizon on purpose: a power cut that takes a visible write (`visibleWriteLossRate`)
    /// keeps the horizons raised to forward it, as if they had been durable before the write was. Only for
    /// proving that the checker notices; never on in a real run.
    public var keepSendHorizonsOnVisibleWriteLoss = false

    /// Keep every event as a line of the result's trace (slower; for replaying one seed).
    public var trace = false

    public init() {}

    /// The calmest useful run: no faults at all, for comparisons.
    public static var noFaults: SimulationOptions {
        var options = SimulationOptions()
        options.partitionRate = 0
        options.dropRate = 0
        options.duplicateRate = 0
        options.reorderRate = 0
        options.delayRate = 0
        options.crashRate = 0
        options.storeResetRate = 0
        options.visibleWriteLossRate = 0
        options.jumpRate = 0
        options.maxSkewMillis = 0
        return options
    }
}
