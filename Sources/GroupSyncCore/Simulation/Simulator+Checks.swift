/// The checker: acknowledgements that must be true, the quiet state that ends a run, and the verdict.
extension Simulator {
    // MARK: Acknowledgements

    /// An `ack` a replica sends is a promise: "I durably hold your history through W". Checked at once
    /// against the sender's history, and again after every crash of the replica that made it.
    func noteAcknowledgement(_ bytes: [UInt8], from receiver: SimulatedReplica, to sender: SimulatedReplica) {
        guard bytes.count > Frame.headerBytes, bytes[Frame.headerBytes] == MessageType.ack.rawValue,
              case .ack(let through)? = try? MessageCodec.decode(Frame(type: bytes[Frame.headerBytes], payload: Array(bytes[(Frame.headerBytes + 1)...])))
        else { return }
        let (r, s) = (receiver.index, sender.index)
        acknowledged[r][s] = max(acknowledged[r][s], through)
        guard through > ackChecked[r][s] else { return }
        if let problem = missingAcknowledged(by: receiver, of: sender, after: ackChecked[r][s], through: through) {
            fail("\(receiver.name) acknowledged \(sender.name)'s history through \(through), but \(problem)")
        }
        ackChecked[r][s] = through
    }

    /// Every acknowledgement `replica` ever made must still hold (after a crash: it was durable).
    func checkAcknowledgements(by replica: SimulatedReplica, why: String) {
        for sender in replicas where sender !== replica {
            let through = acknowledged[replica.index][sender.index]
            guard through > 0 else { continue }
            if let problem = missingAcknowledged(by: replica, of: sender, after: 0, through: through) {
                fail("\(why), \(replica.name) no longer holds what it acknowledged of \(sender.name)'s history (through \(through)): \(problem)")
            }
        }
    }

    /// The first entry of `sender`'s history in `after+1 ... through` that `receiver` lacks (holding
    /// neither it nor anything newer for its key), described; `nil` when it holds them all.
    private func missingAcknowledged(by receiver: SimulatedReplica, of sender: SimulatedReplica, after: Int64, through: Int64) -> String? {
        var cursor = after
        while cursor < through {
            let changes = sender.store.changes(after: cursor, limit: 256)
            guard !changes.isEmpty else { return nil }
            for change in changes {
                if change.sequence > through { return nil }
                let entry = change.entry
                let held = receiver.store.entry(suite: entry.suite, key: entry.key)
                if held == nil || held!.version < entry.version {
                    return "lacks \(entry.suite)/\(entry.key) at \(entry.version.hlc) (position \(change.sequence)); it holds \(held.map { "\($0.version.hlc)" } ?? "nothing")"
                }
                cursor = change.sequence
            }
        }
        return nil
    }

    // MARK: Quiet

    /// Every replica runs, every pair has an established session both ways with nothing pending, and no
    /// frame or notification is on its way.
    func isQuiet() -> Bool {
        for replica in replicas where !replica.daemonUp || replica.notifyScheduled || replica.island != 0 { return false }
        for link in links {
            guard link.queues[0].isEmpty, link.queues[1].isEmpty else { return false }
            for side in 0..<2 {
                guard let session = link.sessions[side], session.phase == .established, session.pendingCount == 0 else { return false }
            }
        }
        return true
    }

    /// Why the run is not quiet, for a failure message.
    func quietnessReport() -> String {
        var parts: [String] = []
        for replica in replicas where !replica.daemonUp { parts.append("\(replica.name) down") }
        for link in links {
            let name = "\(replicas[link.ends[0]].name)-\(replicas[link.ends[1]].name)"
            if !link.isConnected { parts.append("\(name) not connected (next dial at t=\(link.dialAt.map { $0 - start } ?? -1))"); continue }
            for side in 0..<2 {
                guard let session = link.sessions[side] else { parts.append("\(name): \(replicas[link.ends[side]].name) closed"); continue }
                if session.phase != .established || session.pendingCount != 0 || !link.queues[side].isEmpty {
                    parts.append("\(name): \(replicas[link.ends[side]].name) \(session.phase) pending=\(session.pendingCount) inbound=\(link.queues[side].count)")
                }
            }
        }
        var report = parts.prefix(12).joined(separator: "; ")
        if skewRefusalsWhileSettling > 0 {
            let clocks = replicas.map { "\($0.name) \($0.clockOffsetMillis >= 0 ? "+" : "")\($0.clockOffsetMillis / 1000) s" }.joined(separator: ", ")
            report += ". After healing, \(skewRefusalsWhileSettling) sessions were refused for clock skew: some clocks differ by more than the \(configuration.clockRefuseMillis / 1000) s bound (\(clocks)), and such devices never sync until their clocks are set right"
        }
        return report
    }

    // MARK: Verdict

    func checkConverged() {
        let reference = replicas[0].store.entries
        for replica in replicas.dropFirst() {
            let entries = replica.store.entries
            guard entries != reference else { continue }
            let difference = zip(entries, reference).first { $0 != $1 }
            let detail = difference.map { "\($0.0.suite)/\($0.0.key): \(replica.name) has \($0.0.version.hlc), r0 has \($0.1.suite)/\($0.1.key) at \($0.1.version.hlc)" }
                ?? "\(replica.name) holds \(entries.count) entries, r0 \(reference.count)"
            fail("replicas differ after converging: \(detail)")
        }
        for replica in replicas { checkAcknowledgements(by: replica, why: "at the end") }
        for workload in workloads {
            for problem in workload.verify(replicas) { fail("\(workload.name): \(problem)") }
        }
    }
}
