/// Streaming our history to the peer, with flow control.
///
/// Batches hold at most `batchSize` entries and fit in a frame; at most `maxBatchesInFlight` are
/// unacknowledged, so a slow peer holds back our reads instead of piling frames into the socket. Each
/// `ack` frees a slot. Catching up reads the store from the peer's resume point: it costs what changed.
///
/// A batch that would carry only echoes (§6.6) — what the peer just sent us, stored under new sequences —
/// tells the peer nothing it lacks; it only moves the peer's watermark past them, so a later session does
/// not send them back. Sent at once, it costs a write on each side per batch received (our send horizon,
/// the peer's watermark) and two more messages, all of it in the way of the peer's next write. So it waits,
/// folded into the next batch with news, until `maxDeferredEchoes` positions pile up, the next keep-alive
/// exchange, or a graceful end of the session; a session cut short meanwhile resends at most that many.
extension PeerSession {
    /// `flushingEchoes`: send a batch that would carry only echoes even when it covers fewer than
    /// `maxDeferredEchoes` positions (see above). `knownHead`: the store's last sequence as the caller read
    /// it just before; read here when not given.
    mutating func sendAvailable<S: ReplicaStore>(store: S, flushingEchoes: Bool = false, knownHead: Int64? = nil) throws(CloseReason) {
        guard phase == .established else { return }
        guard store.storeID == localStoreID else { throw .storeReplaced(was: localStoreID, now: store.storeID) }
        // Read before the changes, so every position up to it is covered by the reads below.
        let head: Int64
        if let knownHead { head = knownHead } else {
            head = try storeCall("reading the last sequence") { () throws(S.Failure) in try store.lastSequence() }
        }
        while batchesInFlight < configuration.maxBatchesInFlight {
            // The peer's own entries right after the cursor are echoes: skipped unread (during a catch-up from
            // the peer that is every entry we store, and reading each one back would cost as much as storing it).
            let echoesThrough = echo.runEnd(after: sendCursor)
            let changes = try storeCall("reading changes") { () throws(S.Failure) in
                try store.changes(after: echoesThrough, limit: configuration.batchSize)
            }
            // The first batch goes out even when empty: it tells the peer our store epoch and that it is current.
            guard !changes.isEmpty || echoesThrough > sendCursor || !sentFirstBatch else { break }
            if changes.isEmpty, sentFirstBatch, !flushingEchoes, echoesThrough - sendCursor < configuration.maxDeferredEchoes { break }
            raiseSendHorizon(covering: changes.last?.sequence ?? echoesThrough, head: head)
            try sendBatch(of: changes, skippedEchoesThrough: echoesThrough)
        }
        // Everything through `head` is now sent, deferred as echoes, or waiting for an ack that calls this again.
        consideredHead = max(consideredHead, head)
        countPending(head: head)
    }

    /// Sends the run of echoes right after the cursor as a batch with no entries, whatever follows it: the
    /// peer's watermark moves past them and nothing else leaves.
    mutating func sendDeferredEchoes() throws(CloseReason) {
        guard phase == .established, sentFirstBatch, batchesInFlight < configuration.maxBatchesInFlight else { return }
        let echoesThrough = echo.runEnd(after: sendCursor)
        guard echoesThrough > sendCursor else { return }
        raiseSendHorizon(covering: echoesThrough, head: echoesThrough)
        try sendBatch(of: [], skippedEchoesThrough: echoesThrough)
    }

    /// Raises the horizon over a batch about to be sent through `reach`, when it is above it. How far we may
    /// have sent, saved by the shell right after the frames leave (`saveSendHorizon`). Raised to `head` in
    /// one step, so a long catch-up writes it once, not per batch (`reach` passes `head` when a commit landed
    /// since it was read). Not after a void resume point: then it rises only with the peer's acks.
    private mutating func raiseSendHorizon(covering reach: Int64, head: Int64) {
        guard !raiseHorizonOnAck, reach > sendCursor, reach > sendHorizon else { return }
        sendHorizon = max(head, reach)
        horizonToSave = sendHorizon
    }

    private mutating func countPending(head: Int64) {
        // Deferred echoes are not pending: the peer has them.
        pendingCount = unacknowledged.reduce(0) { $0 + $1.count } + Int(max(0, head - echo.runEnd(after: sendCursor)))
        pendingCountedAtHead = head
    }

    /// Sends the longest prefix of `changes` that fits in a frame, leaving out echoes and local-only suites,
    /// in the negotiated version's layout. `changes` start after `skippedEchoesThrough`: the batch covers the
    /// echoes between the cursor and there.
    private mutating func sendBatch(of changes: [Change], skippedEchoesThrough: Int64) throws(CloseReason) {
        var batch = ChangeBatchEncoder(version: wireVersion, after: sendCursor, maxPayloadBytes: configuration.maxFrameBytes - Frame.typeBytes,
                                       compression: configuration.compression)
        var through = skippedEchoesThrough
        for change in changes {
            if echo.contains(change.sequence) || LocalSuites.isLocalOnly(change.entry.suite) {
                through = change.sequence
                continue
            }
            guard batch.append(change) else {
                guard batch.count == 0 else { break }
                throw .entryTooLarge(suite: change.entry.suite, key: change.entry.key, bytes: MessageCodec.encode(change).count, maxBytes: batch.maxBodyBytes)
            }
            through = change.sequence
        }
        send(Frame(type: MessageType.changes.rawValue, payload: batch.payload(through: through)))
        if batch.count > 0 || !sentFirstBatch, let unlogged = batchLog.admit(.sent, entries: batch.count, atMonotonic: eventMonotonic) {
            log("sent", "after=\(sendCursor) through=\(through) entries=\(batch.count)" + RoutineBatchLog.details(unlogged))
        }
        sendCursor = through
        highestSent = max(highestSent, through)
        batchesInFlight += 1
        sentFirstBatch = true
        unacknowledged.append((through, batch.count))
        echo.forget(through: through)
    }

    /// Saves the horizon raised by the frames just sent. After them, not before: a change on its way to a
    /// peer then waits for no write, and the order is as safe. The horizon's commit comes after the commit of
    /// everything it covers, so a store rolled back to a copy holding that horizon holds those changes too;
    /// and a horizon lost with the process (or never written) is only lower than what the peer read, which
    /// makes the next session resend our history rather than trust its resume point (PROTOCOL.md §6.3).
    mutating func saveRaisedSendHorizon<S: ReplicaStore>(store: S) throws(CloseReason) {
        guard let horizon = horizonToSave else { return }
        horizonToSave = nil
        try storeCall("saving the send horizon") { () throws(S.Failure) in try store.setSendHorizon(horizon, peer: peer) }
    }

    mutating func receiveAck<S: ReplicaStore>(_ sequence: Int64, at now: SessionTime, store: S) throws(CloseReason) {
        guard batchesInFlight > 0 else { throw .protocolViolation("ack of \(sequence) with no batch outstanding") }
        guard sequence <= highestSent else { throw .protocolViolation("ack of \(sequence), beyond what was sent (\(highestSent))") }
        let heldBack = batchesInFlight == configuration.maxBatchesInFlight
        batchesInFlight -= 1
        unacknowledged.removeAll { $0.through <= sequence }
        if raiseHorizonOnAck, sequence > sendHorizon {
            // The peer now holds our current history through `sequence`: its watermark no longer speaks of
            // the old one, so a later resume point up to here can be trusted.
            try storeCall("saving the send horizon") { () throws(S.Failure) in try store.setSendHorizon(sequence, peer: peer) }
            sendHorizon = sequence
        }
        // The whole resend is acknowledged: the peer's resume point is about our current history from now on,
        // so the horizon is saved after each send again. Left raised only by acks, a session that ended with a
        // change sent and unacknowledged (a plain stop) made the next one resend the whole store.
        // What was sent meanwhile, while the horizon waited for acks, is covered now, as a send covers it.
        if raiseHorizonOnAck, sequence >= resendThrough {
            raiseHorizonOnAck = false
            if let reach = unacknowledged.map(\.through).max(), reach > sendHorizon {
                sendHorizon = reach
                horizonToSave = reach
            }
        }
        if heldBack {
            try sendAvailable(store: store)
        } else {
            // Flow control held nothing back, and every commit since the last look announces itself: the
            // store need not be read again for each ack (one per write, in steady traffic).
            countPending(head: consideredHead)
        }
        if pendingCount == 0 { lastSyncMillis = now.wallMillis }
    }

    /// The peer refused some entries and asks again from its watermark.
    mutating func receiveRequest<S: ReplicaStore>(after sequence: Int64, store: S) throws(CloseReason) {
        guard sequence <= highestSent else { throw .protocolViolation("request from \(sequence), beyond what was sent (\(highestSent))") }
        // A peer asks again only after refusing entries, which it logs: the first request of a session is
        // logged and then every hundredth, so a peer that floods them cannot fill the log.
        resendsAnswered += 1
        if resendsAnswered % 100 == 1 { log("resend", "after=\(sequence) cursor_was=\(sendCursor) in_session=\(resendsAnswered)") }
        sendCursor = min(sendCursor, sequence)
        unacknowledged.removeAll { $0.through > sequence }
        try sendAvailable(store: store)
    }
}
