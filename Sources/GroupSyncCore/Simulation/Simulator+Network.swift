/// Connections, frames and session events: the part of the simulator that plays the daemon's shell.
extension Simulator {
    // MARK: Dialing

    func scheduleDial(_ link: SimulatedLink, at time: Int64) {
        link.dialAt = time
        events.push(.dial(link: link.index), at: time)
    }

    /// A dialer's attempt: it connects when both daemons run and can reach each other, else backs off.
    func dial(_ link: SimulatedLink) {
        guard link.dialAt == now, !link.isConnected else { return }
        link.dialAt = nil
        let (a, b) = (replicas[link.ends[0]], replicas[link.ends[1]])
        guard a.daemonUp || b.daemonUp else { return }  // both down: the first to restart dials
        guard a.daemonUp, b.daemonUp, reachable(a.index, b.index) else {
            scheduleDial(link, at: now + link.backoff.nextDelay(unit: Double.random(in: 0..<1, using: &random)))
            return
        }
        connect(link)
    }

    func connect(_ link: SimulatedLink) {
        link.generation += 1
        link.open = [true, true]
        link.queues = [[], []]
        link.lastArrival = [now, now]
        link.deliveryAt = [nil, nil]
        link.timerAt = [nil, nil]
        link.lastReceivedAt = [now, now]
        link.tainted = false
        link.connectedAt = now
        link.peerRollbacks = [replicas[link.ends[1]].rollbacks, replicas[link.ends[0]].rollbacks]
        result.stats.connections += 1
        trace("link \(replicas[link.ends[0]].name)-\(replicas[link.ends[1]].name) connected")
        for side in 0..<2 {
            let me = replicas[link.ends[side]], peer = replicas[link.ends[1 - side]]
            link.sessions[side] = PeerSession(peer: peer.device, deviceName: me.name, configuration: configuration)
        }
        for side in 0..<2 where link.sessions[side] != nil {
            drive(link, side: side) { session, store, now in session.start(at: now, store: store) }
        }
    }

    /// One end closes: its session is gone, and the peer hears of it (`fin` after what was written, or a
    /// `reset`) once the packet reaches it. When both ends are closed, the dialer takes over.
    func closeSide(_ link: SimulatedLink, _ side: Int, tellingPeer packet: SimulatedLink.Packet.Kind) {
        guard link.open[side] else { return }
        link.open[side] = false
        link.sessions[side] = nil
        link.queues[side] = []
        link.deliveryAt[side] = nil
        link.timerAt[side] = nil
        if link.open[1 - side] {
            enqueue(packet, on: link, to: 1 - side)
        } else {
            linkDown(link)
        }
    }

    /// A lost frame: TCP gives up on the connection (a reset both ways); what was in flight is lost.
    func resetConnection(_ link: SimulatedLink) {
        for side in 0..<2 where link.open[side] {
            link.open[side] = false
            link.sessions[side] = nil
            link.queues[side] = []
            link.deliveryAt[side] = nil
            link.timerAt[side] = nil
        }
        linkDown(link)
    }

    func linkDown(_ link: SimulatedLink) {
        trace("link \(replicas[link.ends[0]].name)-\(replicas[link.ends[1]].name) down")
        link.generation += 1
        // As the daemon's dialer: a session that lasted is a success, one that ended at once a failure.
        if now - link.connectedAt > 10_000 { link.backoff.reset() }
        scheduleDial(link, at: now + link.backoff.nextDelay(unit: Double.random(in: 0..<1, using: &random)))
    }

    // MARK: Frames

    func enqueue(_ kind: SimulatedLink.Packet.Kind, on link: SimulatedLink, to side: Int) {
        guard link.open[side] else { return }  // the far end is closed: the bytes go nowhere
        var arrival = max(link.lastArrival[side], now + link.latencyMillis + Int64.random(in: 0...link.latencyMillis / 2, using: &random))
        if case .bytes = kind, faultsActive, random.chance(options.delayRate) {
            arrival += Int64.random(in: 1...max(1, options.maxDelayMillis), using: &random)
            result.stats.delays += 1
        }
        link.lastArrival[side] = arrival
        link.queues[side].append(SimulatedLink.Packet(arrival: arrival, kind: kind))
        if link.deliveryAt[side] == nil { scheduleDelivery(link, to: side) }
    }

    func scheduleDelivery(_ link: SimulatedLink, to side: Int) {
        guard let head = link.queues[side].first, reachable(link.ends[0], link.ends[1]) else {
            link.deliveryAt[side] = nil  // a partition holds packets until it heals (TCP retransmits)
            return
        }
        let at = max(now, head.arrival)
        link.deliveryAt[side] = at
        events.push(.deliver(link: link.index, side: side, generation: link.generation), at: at)
    }

    func deliver(_ link: SimulatedLink, to side: Int, generation: Int) {
        guard link.generation == generation, link.deliveryAt[side] == now else { return }
        link.deliveryAt[side] = nil
        guard link.open[side], let head = link.queues[side].first, head.arrival <= now, reachable(link.ends[0], link.ends[1]) else {
            if link.open[side] { scheduleDelivery(link, to: side) }
            return
        }
        link.queues[side].removeFirst()
        switch head.kind {
        case .fin, .reset:
            let what = if case .fin = head.kind { "the peer closed the connection" } else { "connection reset by peer" }
            drive(link, side: side) { session, _, _ in session.shutdown(reason: what) }
            closeSide(link, side, tellingPeer: .fin)
        case .bytes(let bytes):
            deliverBytes(bytes, on: link, to: side)
        }
        if link.open[side] && link.deliveryAt[side] == nil && !link.queues[side].isEmpty { scheduleDelivery(link, to: side) }
    }

    private func deliverBytes(_ first: [UInt8], on link: SimulatedLink, to side: Int) {
        var bytes = first
        if faultsActive {
            if random.chance(options.dropRate) {
                result.stats.drops += 1
                trace("frame to \(replicas[link.ends[side]].name) lost: connection reset")
                resetConnection(link)
                return
            }
            if random.chance(options.reorderRate), let next = link.queues[side].first, case .bytes(let later) = next.kind {
                // The next frame overtakes this one.
                result.stats.reorders += 1
                link.tainted = true
                link.queues[side][0] = SimulatedLink.Packet(arrival: now, kind: .bytes(bytes))
                bytes = later
                trace("frame to \(replicas[link.ends[side]].name) overtaken")
            }
            if random.chance(options.duplicateRate) {
                result.stats.duplicates += 1
                link.tainted = true
                link.queues[side].insert(SimulatedLink.Packet(arrival: now, kind: .bytes(bytes)), at: 0)
                trace("frame to \(replicas[link.ends[side]].name) duplicated")
            }
        }
        // TCP coalesces what has arrived and splits at arbitrary points: exercise the frame decoder.
        while random.chance(0.3), let next = link.queues[side].first, next.arrival <= now, case .bytes(let more) = next.kind {
            link.queues[side].removeFirst()
            bytes += more
        }
        var chunks: [ArraySlice<UInt8>] = [bytes[...]]
        if bytes.count > 1 && random.chance(0.2) {
            let cut = Int.random(in: 1..<bytes.count, using: &random)
            chunks = [bytes[..<cut], bytes[cut...]]
        }
        for chunk in chunks {
            guard link.sessions[side] != nil else { return }
            result.stats.framesDelivered += 1
            result.stats.bytesDelivered += chunk.count
            // Frames are enqueued whole and a split one is delivered whole within this event, so this is
            // when the session last heard from its peer.
            link.lastReceivedAt[side] = now
            drive(link, side: side) { session, store, now in session.receive(bytes: chunk, at: now, store: store) }
        }
    }

    // MARK: Timers

    func scheduleTimer(_ link: SimulatedLink, side: Int) {
        guard link.open[side], let deadline = link.sessions[side]?.nextDeadline else { return }
        // The session's deadline is on its replica's monotonic clock; never fire in the past (ticking early is
        // harmless).
        let replica = replicas[link.ends[side]]
        let at = max(now + 1, deadline + replica.bootedAtMillis)
        let deadPeerAt = link.lastReceivedAt[side] + configuration.deadAfterMillis
        if at > max(now + 1, deadPeerAt) {
            fail("\(replica.name)'s session with \(replicas[link.ends[1 - side]].name) sleeps until \(at - link.lastReceivedAt[side]) ms after it last heard from its peer, past the \(configuration.deadAfterMillis) ms dead-peer timeout (wall clock offset \(replica.clockOffsetMillis) ms)")
        }
        if let scheduled = link.timerAt[side], scheduled <= at, scheduled >= now { return }
        link.timerAt[side] = at
        events.push(.timer(link: link.index, side: side, generation: link.generation), at: at)
    }

    func fireTimer(_ link: SimulatedLink, side: Int, generation: Int) {
        guard link.generation == generation, link.timerAt[side] == now else { return }
        link.timerAt[side] = nil
        guard link.sessions[side] != nil else { return }
        drive(link, side: side) { session, _, now in session.tick(at: now) }
    }

    // MARK: Driving a session

    /// Feeds one event to one session and carries out its outputs, as `PeerConnection` does. A crash
    /// pending on the replica strikes here: between two of the event's transactions (or after all of them,
    /// with only some of its frames written), and the event's other effects are lost with the process.
    func drive(_ link: SimulatedLink, side: Int,
               _ event: (inout PeerSession, MemoryReplicaStore, SessionTime) -> [SessionOutput]) {
        guard link.sessions[side] != nil else { return }
        let replica = replicas[link.ends[side]]
        if let kind = replica.pendingCrash {
            let store = replica.store
            var states = [store.durableState]
            store.didCommit = { [unowned store] in states.append(store.durableState) }
            let outputs = event(&link.sessions[side]!, store, replica.sessionTime)
            store.didCommit = nil
            let survived = Int.random(in: 0..<states.count, using: &random)
            if survived == states.count - 1 {
                // The process died after committing, while writing its frames: some may have left.
                let sends = outputs.filter { if case .send = $0 { true } else { false } }
                perform(Array(sends.prefix(Int.random(in: 0...sends.count, using: &random))), on: link, side: side)
            }
            result.stats.midEventCrashes += 1
            trace("\(replica.name) crashes inside an event, keeping \(survived) of its \(states.count - 1) transactions")
            crash(replica, kind: kind, restoring: states[survived])
            return
        }
        if options.loseAcknowledgedWritesOnCrash {
            // The self-test's broken store: a crash takes the last event that committed with it.
            let before = replica.store.durableState
            replica.store.didCommit = { [unowned replica] in replica.previousState = before }
        }
        let strike = faultsActive && random.chance(options.visibleWriteLossRate)
        let before = strike ? replica.store.durableState : nil
        let outputs = event(&link.sessions[side]!, replica.store, replica.sessionTime)
        replica.store.didCommit = nil
        if let before, outputs.contains(where: { if case .applied = $0 { true } else { false } }) {
            // The batch was committed before its sync, so the other sessions forward it; the power fails
            // before the sync ended, and the ack (sent after it) never leaves.
            losePowerAfterForwarding("a peer's batch", on: replica, restoring: before)
            return
        }
        perform(outputs, on: link, side: side)
        // The daemon's order: the horizon raised for those frames is saved once they are out. A crash in
        // between (a crash inside this event) loses it, as a process killed there would.
        if link.sessions[side]?.hasSendHorizonToSave == true {
            drive(link, side: side) { session, store, _ in session.saveSendHorizon(store: store) }
            return
        }
        scheduleTimer(link, side: side)
    }

    func perform(_ outputs: [SessionOutput], on link: SimulatedLink, side: Int) {
        let replica = replicas[link.ends[side]]
        for output in outputs {
            switch output {
            case .send(let bytes):
                if link.open[side] {
                    // An ack is about the peer's store as this session knows it; an older epoch's means nothing
                    // now, nor does one about history the peer has since lost to a power cut.
                    let sender = replicas[link.ends[1 - side]]
                    if link.sessions[side]?.peerStoreID ?? sender.store.storeID == sender.store.storeID,
                       link.peerRollbacks[side] == sender.rollbacks {
                        noteAcknowledgement(bytes, from: replica, to: sender)
                    }
                    enqueue(.bytes(bytes), on: link, to: 1 - side)
                }
            case .close(let reason):
                // The frames before the close are out: save the horizon they raised before the session goes.
                if var session = link.sessions[side], session.hasSendHorizonToSave { _ = session.saveSendHorizon(store: replica.store) }
                recordClose(reason, on: link, side: side)
                closeSide(link, side, tellingPeer: .fin)
            case .log(let line):
                // Lines read "peer=<7 characters> event=<name> …".
                if line.utf8.dropFirst(19).starts(with: "refused ".utf8) { result.stats.refusals += 1 }
                trace("\(replica.name) \(line)")
            case .applied:
                observe(replica)
                scheduleNotify(replica)
            }
        }
    }

    func recordClose(_ reason: CloseReason, on link: SimulatedLink, side: Int) {
        let label: String
        var isProtocolError = false
        switch reason {
        case .peerSilent(let millis):
            label = "peer-silent"
            let silence = now - link.lastReceivedAt[side]
            if silence < configuration.deadAfterMillis {
                fail("\(replicas[link.ends[side]].name) declared \(replicas[link.ends[1 - side]].name) silent (\(millis) ms by its count) after only \(silence) ms without a frame from it (wall clock offset \(replicas[link.ends[side]].clockOffsetMillis) ms)")
            }
        case .clockSkew:
            label = "clock-skew"
            if settlingSince != nil { skewRefusalsWhileSettling += 1 }
        case .shutdown: label = "closed-by-shell"
        case .connectionLost: label = "connection-lost"
        case .peerSaidGoodbye: label = "peer-goodbye"
        case .peerReportedError(let code, _):
            label = "peer-error-\(code)"
            isProtocolError = code != .clockSkew && code != .shutdown
        default:
            label = reason.code?.description ?? "other"
            isProtocolError = true
        }
        result.stats.closes[label, default: 0] += 1
        if isProtocolError && !link.tainted {
            fail("\(replicas[link.ends[side]].name)'s session with \(replicas[link.ends[1 - side]].name) ended for a protocol error on a connection that carried no duplicated or reordered frame: \(reason)")
        }
    }
}
