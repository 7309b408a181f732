/// Timers: keep-alive, dead-peer detection and retrying refused entries. The shell calls `tick` at
/// `nextDeadline`; nothing here wakes an idle session more often than once per keep-alive period.
///
/// Every timer runs on the monotonic clock (`SessionTime.monotonicMillis`), never the wall clock: silence
/// measured on a wall clock stepped back by an hour would stay negative for an hour, keeping a vanished peer
/// "connected" and unpinged; stepped forward by minutes, it would declare every live peer silent at once.
extension PeerSession {
    mutating func checkTimers(at now: SessionTime) throws(CloseReason) {
        guard phase == .handshaking || phase == .established else { return }
        let silence = now.monotonicMillis - lastReceivedMonotonic
        if silence >= configuration.deadAfterMillis { throw .peerSilent(millis: silence) }
        guard phase == .established else { return }
        if let retryAt = retryAtMonotonic, now.monotonicMillis >= retryAt { retryRefused() }
        // Ping when the line has been quiet for a keep-alive period, and again each period without an answer.
        if now.monotonicMillis >= max(lastReceivedMonotonic, lastPingMonotonic) + configuration.keepAliveMillis { sendPing(at: now) }
    }
}
