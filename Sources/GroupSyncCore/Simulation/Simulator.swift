/// Deterministic simulation of a cluster of replicas, after FoundationDB and TigerBeetle: the real
/// `PeerSession` state machines and `MemoryReplicaStore`s — the code the daemon runs, not a model of it —
/// over a simulated network and clock, with faults drawn from one seed. The same seed replays the same run
/// exactly, so any failure it finds can be replayed, traced and fixed.
///
/// A run has two phases. During the fault phase the workloads write on random replicas while the network
/// partitions and heals, loses frames (which resets their connection), duplicates, reorders and delays
/// them, replicas crash (restarting from their durable state only, sometimes between two transactions of
/// one event, or after a local write or a peer's batch was visible and forwarded but before its fsync
/// ended, losing it), stores are moved aside (a new store ID that peers must read afresh and refill) and
/// wall clocks are skewed and jump by minutes (sessions time their deadlines on each replica's monotonic
/// clock, which no jump moves, and read the wall clock for what peers compare). Then everything heals — partitions end, crashed replicas
/// restart, clocks are set right — and the run goes on until the network is quiet and every
/// session reports its peer current. The checker then requires:
///
/// - every replica holds the same store (entries, versions and values);
/// - each workload's promises (for key-value data: every key's winner is the greatest (hlc, origin) of its
///   acknowledged writes, so no acknowledged write is lost and no deleted key comes back; a write lost to a
///   power cut after it was forwarded may win instead, if a peer kept it, but then everywhere);
/// - every acknowledgement was true: when a replica acks a peer's history through sequence W, it durably
///   holds every entry of that history up to W (or something newer) — checked when the ack is sent and
///   again after every crash;
/// - on a connection that carried no duplicated or reordered frame, no session ended for a protocol error;
/// - liveness is timed by real time, whatever the wall clocks do: no session declares its peer silent before
///   the dead-peer timeout has passed since the last bytes it got from it, nor plans to wake later than that.
///
/// The shell duties the daemon carries out (`PeerConnection`, `Daemon`) are mirrored here: frames go out
/// in order, a closed session closes its connection, applied entries wake the other sessions (after a short
/// inotify-like delay), sessions are ticked at their deadlines, and dialers redial with `ReconnectBackoff`.
public final class Simulator {
    public let seed: UInt64
    public let options: SimulationOptions
    public private(set) var replicas: [SimulatedReplica] = []
    let workloads: [any SimulationWorkload]

    var random: SeededGenerator
    let time: SimulationTime
    var links: [SimulatedLink] = []
    var events = EventQueue<Event>()
    var configuration = SessionConfiguration()
    var result: SimulationResult

    var faultsActive = true
    var settlingSince: Int64?
    var partitionEpoch = 0
    var skewRefusalsWhileSettling = 0
    let start: Int64 = 1_700_000_000_000

    /// Per (receiver, sender): the highest sequence of the sender's history the receiver acknowledged,
    /// and how far that claim has been checked.
    var acknowledged: [[Int64]]
    var ackChecked: [[Int64]]

    enum Event {
        case deliver(link: Int, side: Int, generation: Int)
        case timer(link: Int, side: Int, generation: Int)
        case dial(link: Int)
        case notify(replica: Int)
        case operation
        case partition
        case heal(epoch: Int)
        case crash
        case forceCrash(replica: Int, life: Int)
        case storeReset
        case restart(replica: Int, life: Int)
        case clockJump
        case clockFixed(replica: Int, jump: Int64)
        case endFaults
    }

    public init(seed: UInt64, options: SimulationOptions = SimulationOptions(),
                workloads: [any SimulationWorkload] = SimulationWorkloads.standard()) {
        self.seed = seed
        self.options = options
        self.workloads = workloads
        random = SeededGenerator(seed: seed)
        time = SimulationTime(now: start)
        let count = Int.random(in: options.replicas, using: &random)
        result = SimulationResult(seed: seed, replicas: count)
        acknowledged = Array(repeating: Array(repeating: 0, count: count), count: count)
        ackChecked = acknowledged
        for index in 0..<count {
            let device = try! DeviceID(bytes: (0..<DeviceID.byteCount).map { _ in UInt8.random(in: 0...255, using: &random) })
            let skew = options.maxSkewMillis > 0 ? Int64.random(in: -options.maxSkewMillis...options.maxSkewMillis, using: &random) : 0
            replicas.append(SimulatedReplica(index: index, device: device, storeID: "r\(index)-\(random.next() % 1_000_000)",
                                             skewMillis: skew, time: time))
        }
        for replica in replicas { replica.peers = Set(replicas.map(\.device)).subtracting([replica.device]) }
        for a in 0..<count {
            for b in (a + 1)..<max(a + 1, count) {
                let latency = Int64.random(in: 1...max(1, options.maxLatencyMillis), using: &random)
                links.append(SimulatedLink(index: links.count, ends: [a, b], latencyMillis: latency))
            }
        }
        // Small batches and windows make many batches in flight, the interesting case for flow control.
        configuration.batchSize = Int.random(in: 1...8, using: &random)
        configuration.maxBatchesInFlight = Int.random(in: 1...4, using: &random)
    }

    var now: Int64 { time.now }

    /// Runs one seed to its verdict.
    public static func run(seed: UInt64, options: SimulationOptions = SimulationOptions()) -> SimulationResult {
        Simulator(seed: seed, options: options).run()
    }

    public func run() -> SimulationResult {
        for link in links { scheduleDial(link, at: now + Int64.random(in: 0...100, using: &random)) }
        var operationTimes = (0..<options.operations).map { _ in Int64.random(in: 0..<max(1, options.faultMillis), using: &random) }
        operationTimes.sort()
        for offset in operationTimes { events.push(.operation, at: start + offset) }
        scheduleNext(.partition, rate: options.partitionRate)
        scheduleNext(.crash, rate: options.crashRate)
        scheduleNext(.clockJump, rate: options.jumpRate)
        scheduleNext(.storeReset, rate: options.storeResetRate)
        events.push(.endFaults, at: start + options.faultMillis)

        let deadline = start + options.faultMillis + options.settleLimitMillis
        while let (at, event) = events.pop() {
            if at > deadline { break }
            time.now = max(time.now, at)
            result.stats.events += 1
            handle(event)
            if result.failures.count > 50 { break }
            if settlingSince != nil && isQuiet() { break }
        }
        result.stats.simulatedMillis = now - start
        if let since = settlingSince, isQuiet() {
            result.stats.convergeMillis = now - since
            checkConverged()
        } else if result.failures.count <= 50 {
            fail("not converged \(options.settleLimitMillis / 60_000) minutes after the faults stopped: \(quietnessReport())")
        }
        return result
    }

    // MARK: Events

    func handle(_ event: Event) {
        switch event {
        case let .deliver(link, side, generation): deliver(links[link], to: side, generation: generation)
        case let .timer(link, side, generation): fireTimer(links[link], side: side, generation: generation)
        case .dial(let link): dial(links[link])
        case .notify(let index): notify(replicas[index])
        case .operation: operate()
        case .partition:
            guard faultsActive else { return }
            partition()
            scheduleNext(.partition, rate: options.partitionRate)
        case .heal(let epoch): if epoch == partitionEpoch { healPartition() }
        case .crash:
            guard faultsActive else { return }
            crashSomeone()
            scheduleNext(.crash, rate: options.crashRate)
        case let .forceCrash(index, life):
            let replica = replicas[index]
            if replica.life == life, let kind = replica.pendingCrash {
                replica.pendingCrash = nil
                crash(replica, kind: kind, restoring: replica.store.durableState)
            }
        case let .restart(index, life): if replicas[index].life == life { restart(replicas[index]) }
        case .storeReset:
            guard faultsActive else { return }
            resetSomeStore()
            scheduleNext(.storeReset, rate: options.storeResetRate)
        case .clockJump:
            guard faultsActive else { return }
            jumpSomeClock()
            scheduleNext(.clockJump, rate: options.jumpRate)
        case let .clockFixed(index, jump):
            let replica = replicas[index]
            if replica.jumpMillis == jump && jump != 0 { setClock(replica, jump: 0, why: "set right") }
        case .endFaults: endFaults()
        }
    }

    func scheduleNext(_ event: Event, rate: Double) {
        if let delay = random.exponentialMillis(perMinute: rate) { events.push(event, at: now + delay) }
    }

    /// One local operation from a workload picked by weight, on a replica whose apps are running.
    func operate() {
        guard faultsActive else { return }
        let candidates = replicas.filter(\.deviceUp)
        guard let replica = candidates.randomElement(using: &random) else { return }
        let total = workloads.reduce(0) { $0 + $1.weight }
        guard total > 0 else { return }
        var pick = Int.random(in: 0..<total, using: &random)
        let workload = workloads.first { pick -= $0.weight; return pick < 0 }!
        // The state to fall back to is taken only when the power cut will strike: a copy taken for nothing
        // costs a copy of the whole store at the write that follows.
        let strike = replica.daemonUp && replica.pendingCrash == nil && random.chance(options.visibleWriteLossRate)
        let before = strike ? replica.store.durableState : nil
        guard let line = workload.perform(on: replica, random: &random) else { return }
        result.stats.operations += 1
        trace("\(replica.name) \(workload.name): \(line)")
        if let before, workload.lastOperationWasLost(on: replica) {
            losePowerAfterForwarding("the write", on: replica, restoring: before)
            return
        }
        observe(replica)
        scheduleNotify(replica)
    }

    /// A local write, or a peer's batch, is visible before its fsync ends (`Store.write`, `Store.apply`), and
    /// the daemon forwards it at once: power fails after the sessions sent it, before anyone was answered.
    /// The device comes back without it — and without the send horizons raised to forward it — so positions
    /// its peers read now hold other writes: the acknowledgements they made of them are void, and the
    /// protocol must resend (§6.3) and bring what was lost back from whoever kept it (§6.6).
    func losePowerAfterForwarding(_ what: String, on replica: SimulatedReplica, restoring before: MemoryReplicaStore.DurableState) {
        result.stats.visibleWriteLosses += 1
        trace("\(replica.name) power fails after \(what) became visible, before its fsync ended")
        notify(replica)
        replica.rollbacks += 1
        let restored = options.keepSendHorizonsOnVisibleWriteLoss ? before.keepingSendHorizons(of: replica.store.durableState) : before
        crash(replica, kind: .device, restoring: restored)
        let kept = replica.store.lastSequence()
        for other in replicas.indices {
            acknowledged[other][replica.index] = min(acknowledged[other][replica.index], kept)
            ackChecked[other][replica.index] = min(ackChecked[other][replica.index], kept)
        }
    }

    /// The daemon learns of a commit through inotify, a moment later, and tells every session.
    func scheduleNotify(_ replica: SimulatedReplica) {
        guard replica.daemonUp, !replica.notifyScheduled else { return }
        replica.notifyScheduled = true
        events.push(.notify(replica: replica.index), at: now + Int64.random(in: 0...3, using: &random))
    }

    func notify(_ replica: SimulatedReplica) {
        replica.notifyScheduled = false
        guard replica.daemonUp else { return }
        for link in links {
            guard let side = link.side(of: replica.index), link.sessions[side] != nil else { continue }
            drive(link, side: side) { session, store, now in session.localChangesAvailable(at: now, store: store) }
        }
    }

    func observe(_ replica: SimulatedReplica) {
        for workload in workloads {
            for problem in workload.observe(replica) { fail("\(workload.name) on \(replica.name): \(problem)") }
        }
    }

    // MARK: Faults

    func partition() {
        partitionEpoch += 1
        let islands = Int.random(in: 2...3, using: &random)
        for replica in replicas { replica.island = Int.random(in: 0..<islands, using: &random) }
        if Set(replicas.map(\.island)).count < 2 {
            let loner = replicas.randomElement(using: &random)!
            loner.island = loner.island == 0 ? 1 : 0
        }
        result.stats.partitions += 1
        trace("partition " + replicas.map { "\($0.name):\($0.island)" }.joined(separator: " "))
        let length = Int64.random(in: max(1, options.maxPartitionMillis / 10)...max(1, options.maxPartitionMillis), using: &random)
        events.push(.heal(epoch: partitionEpoch), at: now + length)
    }

    func healPartition() {
        guard replicas.contains(where: { $0.island != 0 }) else { return }
        for replica in replicas { replica.island = 0 }
        trace("partition healed")
        for link in links {
            for side in 0..<2 where link.open[side] && link.deliveryAt[side] == nil { scheduleDelivery(link, to: side) }
        }
    }

    func reachable(_ a: Int, _ b: Int) -> Bool { replicas[a].island == replicas[b].island }

    func crashSomeone() {
        guard let replica = replicas.filter({ $0.daemonUp && $0.pendingCrash == nil }).randomElement(using: &random) else { return }
        let kind: CrashKind = random.chance(0.5) ? .device : .daemon
        if random.chance(0.5) {
            // Strike inside its next session event; if none comes soon, crash anyway.
            replica.pendingCrash = kind
            events.push(.forceCrash(replica: replica.index, life: replica.life), at: now + 2_000)
        } else {
            crash(replica, kind: kind, restoring: options.loseAcknowledgedWritesOnCrash ? replica.previousState ?? replica.store.durableState : replica.store.durableState)
        }
    }

    /// The replica dies: its connections vanish (peers see a reset once it reaches them), and it will
    /// restart from `state` — what was durable — and nothing else.
    func crash(_ replica: SimulatedReplica, kind: CrashKind, restoring state: MemoryReplicaStore.DurableState) {
        result.stats.crashes += 1
        replica.life += 1
        replica.pendingCrash = nil
        replica.daemonUp = false
        if kind == .device { replica.deviceUp = false }
        replica.notifyScheduled = false
        replica.store = MemoryReplicaStore(restoring: state)
        trace("\(replica.name) crashed (\(kind == .device ? "power loss" : "kill -9 of the daemon")); restarts from its durable state, sequence \(replica.store.lastSequence())")
        for link in links {
            guard let side = link.side(of: replica.index), link.open[side] else { continue }
            closeSide(link, side, tellingPeer: .reset)
        }
        checkAcknowledgements(by: replica, why: "after a crash")
        observe(replica)
        let downtime = Int64.random(in: 1_000...max(1_000, options.maxDowntimeMillis), using: &random)
        events.push(.restart(replica: replica.index, life: replica.life), at: now + (faultsActive ? downtime : 0))
    }

    func restart(_ replica: SimulatedReplica) {
        guard !replica.daemonUp else { return }
        // A machine that lost power boots again: its monotonic clock starts over (a killed daemon's does not).
        if !replica.deviceUp { replica.bootedAtMillis = now }
        replica.deviceUp = true
        replica.daemonUp = true
        trace("\(replica.name) restarted")
        // The daemon starts a dialer per peer at once, with fresh backoff.
        for link in links where link.side(of: replica.index) != nil && !link.isConnected {
            link.backoff.reset()
            scheduleDial(link, at: now + Int64.random(in: 0...50, using: &random))
        }
    }

    /// A store is moved aside and the daemon restarts on an empty one with a new store ID (same device).
    /// Only a store whose every entry a peer already holds, with nothing of it on the wire, so the reset
    /// loses no acknowledged write and the checker's expectations stand.
    func resetSomeStore() {
        guard let replica = replicas.filter({ $0.daemonUp && $0.pendingCrash == nil }).randomElement(using: &random) else { return }
        let others = replicas.filter { $0 !== replica }
        let covered = replica.store.entries.allSatisfy { entry in
            others.contains { other in other.store.entry(suite: entry.suite, key: entry.key).map { $0.version >= entry.version } ?? false }
        }
        let quiet = links.allSatisfy { link in link.side(of: replica.index).map { link.queues[1 - $0].isEmpty } ?? true }
        guard covered && quiet else { return }
        result.stats.storeResets += 1
        replica.life += 1
        for link in links {
            guard let side = link.side(of: replica.index), link.open[side] else { continue }
            closeSide(link, side, tellingPeer: .reset)
        }
        let old = replica.store.storeID
        replica.store = MemoryReplicaStore(device: replica.device, storeID: "\(replica.name)-\(random.next() % 1_000_000)")
        trace("\(replica.name) store moved aside: store ID \(old) → \(replica.store.storeID), empty")
        // Acknowledgements about the old store (made by it, or of its history) no longer mean anything.
        for other in replicas.indices {
            acknowledged[replica.index][other] = 0
            ackChecked[replica.index][other] = 0
            acknowledged[other][replica.index] = 0
            ackChecked[other][replica.index] = 0
        }
        for workload in workloads { workload.storeWasReset(replica) }
        for link in links where link.side(of: replica.index) != nil && !link.isConnected {
            link.backoff.reset()
            scheduleDial(link, at: now + Int64.random(in: 0...50, using: &random))
        }
    }

    func jumpSomeClock() {
        let replica = replicas.randomElement(using: &random)!
        if replica.jumpMillis == 0 && random.chance(0.5) {
            // A clock steps minutes away (a dead CMOS battery, a user setting the time by hand), then is fixed.
            let size = Int64.random(in: 6 * 60_000...10 * 60_000, using: &random)
            let jump = random.chance(0.7) ? size : -size
            result.stats.clockJumps += 1
            setClock(replica, jump: jump, why: "jumps")
            events.push(.clockFixed(replica: replica.index, jump: jump), at: now + Int64.random(in: 30_000...8 * 60_000, using: &random))
        } else if options.maxSkewMillis > 0 {
            // NTP steps the clock within the usual skew, possibly backwards.
            result.stats.clockSteps += 1
            replica.skewMillis = Int64.random(in: -options.maxSkewMillis...options.maxSkewMillis, using: &random)
            setClock(replica, jump: replica.jumpMillis, why: "steps")
        }
    }

    /// Steps the replica's wall clock. Its sessions' timers stay as they are: their deadlines are on the
    /// monotonic clock, which a wall step does not move (the liveness checks catch a session that would
    /// have moved them).
    func setClock(_ replica: SimulatedReplica, jump: Int64, why: String) {
        replica.jumpMillis = jump
        trace("\(replica.name) clock \(why): offset \(replica.clockOffsetMillis) ms")
    }

    /// The faults stop and everything heals; from now on the run waits for convergence.
    func endFaults() {
        faultsActive = false
        settlingSince = now
        trace("faults stop; healing")
        healPartition()
        for replica in replicas {
            if replica.jumpMillis != 0 { setClock(replica, jump: 0, why: "set right") }
            if let kind = replica.pendingCrash {
                replica.pendingCrash = nil
                crash(replica, kind: kind, restoring: replica.store.durableState)
            }
            if !replica.daemonUp { restart(replica) }
        }
    }

    // MARK: Reporting

    func fail(_ text: String) {
        result.failures.append("t=\(now - start) ms: \(text)")
        trace("FAILURE: \(text)")
    }

    func trace(_ line: @autoclosure () -> String) {
        if options.trace { result.trace.append("t=\(now - start) \(line())") }
    }
}
