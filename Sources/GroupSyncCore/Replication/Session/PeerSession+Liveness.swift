/// Timers: keep-alive, dead-peer detection and retrying refused entries. The shell calls `tick` at
/// `nextDeadline`; nothing here wakes an idle session more often than once per keep-alive period.
extension PeerSession {
    mutating func checkTimers(nowMillis now: Int64) throws(CloseReason) {
        guard phase == .handshaking || phase == .established else { return }
        let silence = now - lastReceivedMillis
        if silence >= configuration.deadAfterMillis { throw .peerSilent(millis: silence) }
        guard phase == .established else { return }
        if let retryAt = retryAtMillis, now >= retryAt { retryRefused() }
        // Ping when the line has been quiet for a keep-alive period, and again each period without an answer.
        if now >= max(lastReceivedMillis, lastPingMillis) + configuration.keepAliveMillis { sendPing(nowMillis: now) }
    }
}
