import Testing
@testable import GroupSyncCore

/// Three replicas, random writes and deletes, random partitions, connection breaks (a lost message breaks
/// its TCP connection, which is then re-established), random interleaving and chunking of deliveries,
/// lost watermarks (redelivery), skewed clocks and clocks that step minutes ahead and back. After healing, every replica must hold, for every key, the
/// write with the greatest (hlc, origin). Any failure names its seed; rerun with that seed alone to replay.
@Suite struct ReplicationSimulationTests {
    struct Write {
        var version: Version
        var value: Value?
    }

    @Test(arguments: 0..<100) func randomizedReplicasConverge(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        let net = ReplicationNetwork()
        let nodes = (0..<3).map { net.addNode("n\($0)", clockOffsetMillis: Int64.random(in: -45_000...45_000, using: &rng)) }
        var configuration = SessionConfiguration()
        configuration.batchSize = Int.random(in: 1...6, using: &rng)
        configuration.maxBatchesInFlight = Int.random(in: 1...3, using: &rng)
        let links = [net.link(nodes[0], nodes[1], configuration: configuration),
                     net.link(nodes[1], nodes[2], configuration: configuration),
                     net.link(nodes[0], nodes[2], configuration: configuration)]
        var partitioned: Set<Int> = []
        var jumped: Set<Int> = []
        let jump: Int64 = 7 * 60_000
        var writes: [String: [Write]] = [:]
        func linkAllowed(_ link: ReplicationLink) -> Bool {
            !nodes.indices.contains { partitioned.contains($0) && (link.nodes.0 === nodes[$0] || link.nodes.1 === nodes[$0]) }
        }

        for link in links { net.connect(link) }
        for _ in 0..<400 {
            let roll = Int.random(in: 0..<100, using: &rng)
            switch roll {
            case 0..<25:  // a write or a delete
                let node = nodes.randomElement(using: &rng)!
                let key = "k\(Int.random(in: 0..<8, using: &rng))"
                let change: Change?
                if Int.random(in: 0..<4, using: &rng) == 0 {
                    change = node.store.delete(suite: "s", key: key, physicalMillis: net.physical(node))
                } else {
                    change = node.store.set(.int(Int64.random(in: 0..<1_000, using: &rng)), suite: "s", key: key, physicalMillis: net.physical(node))
                }
                if let change {
                    writes[key, default: []].append(Write(version: change.entry.version, value: change.entry.value))
                    net.notifyLocalChange(node, except: nil)
                }
            case 25..<70:  // deliver one chunk, possibly split, on a random live direction
                let live = links.flatMap { link in (0..<2).filter { !link.inFlight[$0].isEmpty }.map { (link, $0) } }
                guard let (link, side) = live.randomElement(using: &rng) else { continue }
                let size = link.inFlight[side][0].count
                net.deliver(link, to: side, splitAt: Int.random(in: 0..<3, using: &rng) == 0 ? Int.random(in: 1...size, using: &rng) : nil)
            case 70..<76:  // a message is lost: its connection breaks
                if let link = links.filter(\.isUp).randomElement(using: &rng) { net.disconnect(link) }
            case 76..<84:  // reconnect
                if let link = links.filter({ !$0.isUp && linkAllowed($0) }).randomElement(using: &rng) { net.connect(link) }
            case 84..<87:  // partition a node away
                let index = Int.random(in: 0..<3, using: &rng)
                partitioned.insert(index)
                for link in links where !linkAllowed(link) && link.isUp { net.disconnect(link) }
            case 87..<89:  // heal a partition
                if let index = partitioned.randomElement(using: &rng) { partitioned.remove(index) }
            case 89..<91:  // a clock steps 7 minutes ahead (sessions refuse it; its writes carry a future HLC), or back
                let index = Int.random(in: 0..<3, using: &rng)
                if jumped.remove(index) != nil { nodes[index].clockOffsetMillis -= jump } else {
                    jumped.insert(index)
                    nodes[index].clockOffsetMillis += jump
                }
            case 91..<93:  // a crash lost a watermark write: the peer's history is delivered again
                let node = nodes.randomElement(using: &rng)!
                for link in links where link.nodes.0 === node || link.nodes.1 === node { if link.isUp { net.disconnect(link) } }
                for other in nodes where other !== node {
                    if let mark = node.store.watermark(peer: other.device) {
                        node.store.setWatermark(Watermark(storeID: mark.storeID, sequence: Int64.random(in: 0...mark.sequence, using: &rng)), peer: other.device)
                    }
                }
            default:  // time passes
                net.now += Int64.random(in: 0..<25_000, using: &rng)
                net.tickAll()
            }
        }

        // Heal everything, set the clocks right, and let it settle: long enough for entries stamped by a
        // clock that was ahead to become acceptable and be asked for again.
        partitioned = []
        for index in jumped { nodes[index].clockOffsetMillis -= jump }
        for _ in 0..<5 {
            for link in links where !link.isUp { net.connect(link) }
            net.advance(to: net.now + 4 * 60_000)
        }
        let context = "seed \(seed)"
        #expect(links.allSatisfy { $0.isEstablished() }, "\(context): links not all established: \(links.map { $0.closeReasons })")
        #expect(ReplicationFixtures.converged(nodes), "\(context): replicas differ")
        for link in links {
            #expect(link.sessions.allSatisfy { $0?.pendingCount == 0 }, "\(context): pending \(link.sessions.map { $0?.pendingCount })")
        }
        for (key, history) in writes {
            let winner = history.max { $0.version < $1.version }!
            for node in nodes {
                let entry = node.store.entry(suite: "s", key: key)
                #expect(entry?.version == winner.version && entry?.value == winner.value, "\(context): \(node.name) holds \(String(describing: entry)) for \(key), expected \(winner)")
            }
        }
        let unexpected = links.flatMap { $0.closeReasons.flatMap { $0 } }.filter {
            if case .peerSilent = $0 { return false }
            if case .clockSkew = $0 { return false }
            if case .peerReportedError(.malformed, _) = $0 { return true }
            if case .peerReportedError = $0 { return false }
            return true
        }
        #expect(unexpected.isEmpty, "\(context): sessions closed for \(unexpected)")
    }
}
