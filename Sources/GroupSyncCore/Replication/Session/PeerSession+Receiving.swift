/// Applying the peer's history and acknowledging what is durable.
///
/// The watermark (`received`) only ever covers a contiguous prefix of the peer's history that is durably
/// applied. Two things can leave a batch applied but the watermark behind: an entry our clock refused (the
/// watermark stops just before it, and we ask again once our clock allows), and a batch that starts beyond
/// the watermark because one before it stalled. Applying such entries early is harmless — merging is
/// idempotent — and skipping the watermark past them would lose them.
///
/// A batch may start beyond the watermark only while such a stall is being repaired (an entry was refused
/// and not yet resent). Any other gap means the peer skipped part of its history — a reordered or lost
/// frame, which TCP never produces, so a faulty peer — and the watermark could never move again: the
/// peer would wait for an ack forever. The session ends instead, and the next one resumes from the watermark.
extension PeerSession {
    mutating func receiveChanges<S: ReplicaStore>(_ batch: ChangeBatch, at now: SessionTime, store: S) throws(CloseReason) {
        var watermarkIsStale = false
        if !receivedFirstBatch {
            receivedFirstBatch = true
            if batch.after < received {
                // The peer did not accept our resume point (its store was restored, say): start over with it.
                log("peer-restarts", "from=\(batch.after) we_had=\(received)")
                received = batch.after
            } else if batch.after > received {
                throw .protocolViolation("the first batch starts after sequence \(batch.after), but we only have up to \(received)")
            }
            // Persist at once when the watermark was for another store epoch (or none), even if nothing moves.
            watermarkIsStale = announcedWatermark != Watermark(storeID: peerStoreID, sequence: received)
        } else if batch.after > received && !awaitingResend {
            throw .protocolViolation("a batch starts after sequence \(batch.after), but we have the peer's history only up to \(received) and refused nothing: history was skipped")
        }

        // The watermark the batch reaches if nothing is refused, saved with the entries in one transaction.
        let continues = batch.after <= received
        let reachedIfAllAccepted = max(received, batch.through)
        let watermark = continues && (reachedIfAllAccepted > received || watermarkIsStale)
            ? PeerWatermark(Watermark(storeID: peerStoreID, sequence: reachedIfAllAccepted), peer: peer) : nil
        let result = try storeCall("applying \(batch.changes.count) entries") { () throws(S.Failure) in
            // The HLC bound is about wall time: how far ahead of our clock a peer's entries may be.
            try store.apply(batch.changes.map(\.entry).filter { !LocalSuites.isLocalOnly($0.suite) }, physicalMillis: now.wallMillis,
                            savingWatermark: watermark)
        }
        if let (entry, problem) = result.unstorable.first {
            // Left out for good, and the watermark moves past it: refusing the batch would stop everything the
            // peer wrote after it, each session offering the same batch again (`Entry.storageProblem`).
            log("unstorable-skipped", "count=\(result.unstorable.count) first=\(quoted(PeerText.shortened(entry.suite + "/" + entry.key))) problem=\(quoted(problem))")
        }
        for change in result.applied { echo.record(change.sequence) }
        if !result.stored.isEmpty { outbox.append(.applied(result.stored)) }

        let firstRefused = Self.firstRefused(in: batch, result: result)
        if continues {
            let reached = firstRefused.map { $0.sequence - 1 } ?? batch.through
            if reached > received || watermarkIsStale {
                received = max(received, reached)
                // With an entry refused, `apply` left the watermark to us: it stops before that entry.
                if firstRefused != nil {
                    try storeCall("saving the watermark") { () throws(S.Failure) in
                        try store.setWatermark(Watermark(storeID: peerStoreID, sequence: received), peer: peer)
                    }
                }
            }
            // The next contiguous batch repairs the stall, unless it stalls again.
            awaitingResend = firstRefused != nil
            if let (sequence, reason) = firstRefused, case let .tooFarAhead(_, ahead, bound) = reason {
                // The earliest moment our clock accepts the first refused entry; later ones follow in its batch.
                // Counted as a wait on the monotonic clock, the base of every deadline: should the wall clock
                // step meanwhile, the request only comes early or late, and an entry still too far ahead is
                // refused again and waited for again.
                retryAtMonotonic = now.monotonicMillis + (ahead - bound) + 1
                log("refused", "count=\(result.refused.count) first=\(sequence) retry_in_ms=\(ahead - bound + 1) reason=\(quoted(reason.description))")
            }
        }
        try noteCaughtUp(store: store, watermarkHeld: true)
        lastSyncMillis = now.wallMillis
        // Empty batches (an up-to-date peer moving our watermark past echoes) are routine, not events.
        if !batch.changes.isEmpty, let unlogged = batchLog.admit(.applied, entries: batch.changes.count, atMonotonic: now.monotonicMillis) {
            log("applied", "after=\(batch.after) through=\(batch.through) entries=\(batch.changes.count) applied=\(result.applied.count) superseded=\(result.superseded) refused=\(result.refused.count) unstorable=\(result.unstorable.count) watermark=\(received)" + RoutineBatchLog.details(unlogged))
        }
        send(.ack(sequence: received))
        // What we just applied is filtered as an echo, but an empty batch still moves the peer's watermark
        // past it, so a reconnect does not send it back either.
        try sendAvailable(store: store)
    }

    /// Our clock allows the refused entries now (or soon): ask for the history again from the watermark.
    mutating func retryRefused() {
        retryAtMonotonic = nil
        log("request", "after=\(received) why=retry-refused")
        send(.request(after: received))
    }

    /// The refused entry with the lowest sequence in the batch, and why it was refused.
    private static func firstRefused(in batch: ChangeBatch, result: ApplyResult) -> (sequence: Int64, reason: ClockError)? {
        guard !result.refused.isEmpty else { return nil }
        var reasons: [Entry: ClockError] = [:]
        for (entry, reason) in result.refused { reasons[entry] = reason }
        for change in batch.changes {
            if let reason = reasons[change.entry] { return (change.sequence, reason) }
        }
        return nil
    }

    /// Records, once, that this store has read the peer's history up to the head its hello announced. From a
    /// peer that announced none (an earlier groupsync), a watermark held is all there is to go by.
    mutating func noteCaughtUp<S: ReplicaStore>(store: S, watermarkHeld: Bool) throws(CloseReason) {
        guard !caughtUpRecorded else { return }
        if let head = peerHeadAtHello {
            guard received >= head else { return }
        } else {
            guard watermarkHeld else { return }
        }
        try storeCall("recording that we caught up") { () throws(S.Failure) in try store.recordCaughtUp(peer: peer) }
        caughtUpRecorded = true
        log("caught-up", "through=\(received)")
    }
}
