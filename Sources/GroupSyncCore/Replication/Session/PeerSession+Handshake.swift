/// `hello` both ways: versions, store epochs, where each side resumes, and the first clock measurement.
extension PeerSession {
    mutating func sendHello<S: ReplicaStore>(at now: SessionTime, store: S) throws(CloseReason) {
        localStoreID = store.storeID
        announcedWatermark = try storeCall("reading the watermark") { () throws(S.Failure) in try store.watermark(peer: peer) }
        let head = try storeCall("reading the last sequence") { () throws(S.Failure) in try store.lastSequence() }
        lastReceivedMonotonic = now.monotonicMillis  // the peer's hello is due within the dead-peer timeout
        lastPingMonotonic = now.monotonicMillis
        helloSentMonotonic = now.monotonicMillis
        phase = .handshaking
        send(.hello(Hello(versions: configuration.versions, deviceName: DeviceName.sendable(deviceName), storeID: localStoreID,
                          physicalMillis: now.wallMillis, resume: announcedWatermark, head: head)))
        log("hello-sent", "store=\(quoted(localStoreID)) resume=\(announcedWatermark.map { "\(quoted($0.storeID)):\($0.sequence)" } ?? "none")")
    }

    mutating func receiveHello<S: ReplicaStore>(_ hello: Hello, at now: SessionTime, store: S) throws(CloseReason) {
        guard let version = ProtocolVersion.negotiate(configuration.versions, hello.versions) else {
            throw .versionMismatch(local: configuration.versions, peer: hello.versions)
        }
        negotiatedVersion = version
        peerName = hello.deviceName
        peerStoreID = hello.storeID
        // One-way: the peer stamped its hello between our hello leaving (give or take one leg) and now, so
        // the offset lies between the stamp against now and the stamp against then; the middle is taken,
        // until a pong narrows it.
        let underWay = max(0, difference(now.monotonicMillis, helloSentMonotonic))
        try measureClockOffset(difference(hello.physicalMillis, difference(now.wallMillis, underWay / 2)), uncertainty: underWay - underWay / 2,
                               at: now, source: "hello")

        // Our position in the peer's history survives only while its store is the one we read.
        if let announced = announcedWatermark, announced.storeID == hello.storeID {
            received = announced.sequence
        } else {
            received = 0
            if let announced = announcedWatermark {
                log("peer-store-changed", "was=\(quoted(announced.storeID)) now=\(quoted(hello.storeID)) reading=all")
            }
        }

        peerHeadAtHello = hello.head
        caughtUpRecorded = try storeCall("reading whether we caught up") { () throws(S.Failure) in try store.hasCaughtUp(peer: peer) }
        try noteCaughtUp(store: store, watermarkHeld: received > 0)

        // Where to start sending ours: the peer's word, if it is about this store and not beyond its end.
        let head = try storeCall("reading the last sequence") { () throws(S.Failure) in try store.lastSequence() }
        sendCursor = 0
        raiseHorizonOnAck = false
        // A resume point of 0 (the peer has read nothing of ours, as after a session in which we had nothing to
        // send) voids nothing: sending starts from the beginning either way.
        if let resume = hello.resume, resume.sequence > 0 {
            if resume.storeID != localStoreID {
                log("resume-void", "why=store-recreated peer-has=\(quoted(resume.storeID)) ours=\(quoted(localStoreID))")
            } else if resume.sequence > head {
                // Same ID but a shorter history: restored from a backup. Resending all is the safe answer.
                raiseHorizonOnAck = true
                log("resume-void", "why=beyond-head resume=\(resume.sequence) head=\(head) advice=\(quoted(Self.copiedHomeAdvice))")
            } else if let horizon = try storeCall("reading the send horizon", { () throws(S.Failure) in try store.sendHorizon(peer: peer) }),
                      resume.sequence <= horizon {
                sendCursor = resume.sequence
            } else {
                // The peer read further than this store ever sent it: the store was restored (a backup, a VM
                // snapshot) and has since reused those sequences for new writes. Trusting the resume point
                // would skip them for good; resending everything costs time, never data.
                raiseHorizonOnAck = true
                log("resume-void", "why=history-rewound resume=\(resume.sequence) head=\(head) advice=\(quoted(Self.copiedHomeAdvice))")
            }
        }
        sendHorizon = try storeCall("reading the send horizon") { () throws(S.Failure) in try store.sendHorizon(peer: peer) } ?? 0
        resendThrough = head
        highestSent = sendCursor
        phase = .established
        log("established", "version=\(version) name=\(quoted(hello.deviceName)) offset_ms=\(clockOffsetMillis ?? 0) send_from=\(sendCursor) head=\(head) receive_from=\(received)")
        // An early ping turns the one-way clock estimate into a round-trip one.
        sendPing(at: now)
        try sendAvailable(store: store)
    }

    // MARK: Clock offset

    mutating func sendPing(at now: SessionTime) {
        lastPingMonotonic = now.monotonicMillis
        lastPingSent = now
        // The wall time: the peer echoes it back beside its own, for the offset estimate (§6.2).
        send(.ping(millis: now.wallMillis))
    }

    mutating func receivePong(echoMillis echo: Int64, peerMillis: Int64, at now: SessionTime) throws(CloseReason) {
        // The round trip of our last ping is timed on the monotonic clock, and the moment the peer read its
        // clock placed on our wall clock as it reads now: a wall step while the ping was out then costs
        // nothing, and the estimate is against our clock as it now is. Without a wall step this is the same
        // as §6.2's `t1 − (t0 + rtt/2)`. A pong for another ping (an older one, or one we never sent) can
        // only be timed by the wall clock.
        let sent = lastPingSent.flatMap { $0.wallMillis == echo ? $0 : nil }
        let roundTrip = sent.map { difference(now.monotonicMillis, $0.monotonicMillis) } ?? difference(now.wallMillis, echo)
        // A pong for a time we never sent (or a clock that stepped back) cannot be measured; keep the old estimate.
        guard roundTrip >= 0, roundTrip <= configuration.deadAfterMillis else { return }
        // The peer read its clock about half way through the round trip (NTP's assumption); `rtt − rtt/2`
        // back from now is exactly `t0 + rtt/2` when the wall clock did not step.
        let ourMillisAtPeerReading = sent != nil ? difference(now.wallMillis, roundTrip - roundTrip / 2) : echo + roundTrip / 2
        try measureClockOffset(difference(peerMillis, ourMillisAtPeerReading), uncertainty: roundTrip - roundTrip / 2, at: now,
                               source: "ping rtt_ms=\(roundTrip)")
    }

    /// A later measurement replaces the current one when it is nearly as certain, or the current one is this old.
    static let clockOffsetRenewalMillis: Int64 = 600_000

    /// Records a measurement (the truth lies within `uncertainty` of `offset`) and enforces the bounds on
    /// what the truth can be at the nearest. A round trip is not all network: a ping that waits behind the
    /// batches of a catch-up, or a pong behind a busy peer, stretches it, and the midpoint assumption then
    /// misreads the offset by up to half of it (found by review: two daemons on one host refused each other
    /// for a 2.8 s "skew" after a 5.7 s catch-up step). So the offset kept for status and the debounce is the
    /// most certain of late, and the session is refused only when even the nearest reading is past the bound.
    /// Past `clockWarnMillis` writes order by a clock that is noticeably off, which is worth one log line;
    /// past `clockRefuseMillis` (the `HybridClock` drift bound) one side's entries would be refused by the
    /// other, so the session stops and both sides say why.
    mutating func measureClockOffset(_ offset: Int64, uncertainty: Int64, at now: SessionTime, source: String) throws(CloseReason) {
        let nearest = offset.magnitude > uncertainty.magnitude ? offset.magnitude - uncertainty.magnitude : 0
        if replacesClockOffset(offset, uncertainty: uncertainty, at: now) || nearest > configuration.clockRefuseMillis.magnitude {
            clockOffsetMillis = offset
            clockOffsetUncertaintyMillis = uncertainty
            clockOffsetMeasuredMonotonic = now.monotonicMillis
        }
        if nearest > configuration.clockRefuseMillis.magnitude {
            throw .clockSkew(offsetMillis: offset, boundMillis: configuration.clockRefuseMillis)
        }
        if nearest > configuration.clockWarnMillis.magnitude && !warnedAboutClock {
            warnedAboutClock = true
            log("clock-offset-warning", "offset_ms=\(offset) bound_ms=\(configuration.clockWarnMillis) source=\(source) advice=\(quoted("enable network time on both devices"))")
        }
    }

    /// Whether a measurement replaces the one kept: when it is nearly as certain; when it rules the kept one
    /// out (their intervals do not meet: a clock stepped); or when the kept one is old.
    func replacesClockOffset(_ offset: Int64, uncertainty: Int64, at now: SessionTime) -> Bool {
        guard let current = clockOffsetMillis, let currentUncertainty = clockOffsetUncertaintyMillis else { return true }
        let apart = difference(offset, current).magnitude
        let together = uncertainty.magnitude + currentUncertainty.magnitude
        return uncertainty <= 2 * currentUncertainty + 20 || apart > together
            || now.monotonicMillis - clockOffsetMeasuredMonotonic >= Self.clockOffsetRenewalMillis
    }

    /// `a - b`, saturating: the operands may come from a hostile peer.
    func difference(_ a: Int64, _ b: Int64) -> Int64 {
        let (result, overflow) = a.subtractingReportingOverflow(b)
        return overflow ? (b < 0 ? .max : .min) : result
    }
}

extension PeerSession {
    /// A history that went back is a restored backup, or a copy of this device's home running on another
    /// machine too, which loses writes (RELIABILITY.md, known limitation 14): the log line says which to rule out.
    static let copiedHomeAdvice = "expected after restoring this device's store from a backup; if a copy of this device's home runs on another machine too, stop it: two machines cannot share one device's identity"
}
