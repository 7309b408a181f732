import Testing
@testable import GroupSyncCore

/// When a peer is dialed again, and which of two crossing connections both devices keep.
@Suite struct DialingTests {
    @Test func backoffDoublesWithJitterUpToItsCeilingAndStartsAfreshAfterALastingSession() {
        var backoff = ReconnectBackoff(baseMillis: 500, maxMillis: 60_000)
        // Each delay lies in the upper half of a ceiling that doubles per failure: never an immediate redial.
        for (failure, ceiling) in [(1, 500), (2, 1_000), (3, 2_000), (4, 4_000)] as [(Int, Int64)] {
            var low = backoff, high = backoff
            #expect(low.nextDelay(unit: 0) == ceiling / 2, "failure \(failure)")
            #expect(high.nextDelay(unit: 0.9999999) < ceiling, "failure \(failure)")
            _ = backoff.nextDelay(unit: 0.5)
        }
        for _ in 0..<100 { _ = backoff.nextDelay(unit: 0.5) }
        #expect(backoff.nextDelay(unit: 0.9999999) <= 60_000, "a peer off for a day costs one attempt a minute")
        // A session that ended at once is one more failure; one that lasted starts afresh.
        backoff.sessionEnded(lastedMillis: 200)
        #expect(backoff.nextDelay(unit: 0) == 30_000)
        backoff.sessionEnded(lastedMillis: ReconnectBackoff.lastingSessionMillis + 1)
        #expect(backoff.failures == 0)
        #expect(backoff.nextDelay(unit: 0) == 250)
    }

    @Test func aPeerThatRefusesThisDeviceIsRedialedAboutEveryTenMinutesNotEveryMinute() {
        var backoff = ReconnectBackoff(baseMillis: 500, maxMillis: 60_000)
        for _ in 0..<30 { _ = backoff.nextDelay(unit: 0.5) }
        #expect(backoff.nextDelay(unit: 0.9999999) < 60_000)
        // Refused: the ceiling grows on to ten minutes, and stays there while the peer refuses.
        backoff.peerRefused = true
        #expect(backoff.nextDelay(unit: 0) == 300_000)
        #expect(backoff.nextDelay(unit: 0.9999999) < 600_000)
        // Any other failure (the peer offline) brings the usual minute back.
        backoff.peerRefused = false
        #expect(backoff.nextDelay(unit: 0.9999999) < 60_000)
        // A refusal right after a lasting session still starts low: the peer may have been restarted with
        // its pairing restored, or removed this device a moment ago.
        backoff.sessionEnded(lastedMillis: ReconnectBackoff.lastingSessionMillis + 1)
        backoff.peerRefused = true
        #expect(backoff.nextDelay(unit: 0) == 250)
        // A ceiling below the usual one is not taken: refusals never redial sooner.
        #expect(ReconnectBackoff(maxMillis: 60_000, refusedMaxMillis: 1_000).refusedMaxMillis == 60_000)
        // A session that lasted forgets the refusal too: the next failure after it is an ordinary one.
        backoff.peerRefused = true
        backoff.reset()
        #expect(!backoff.peerRefused)
    }

    @Test func crossingConnectionsAreResolvedAlikeOnBothSides() throws {
        let a = try DeviceID(bytes: Array(repeating: 1, count: 32)), b = try DeviceID(bytes: Array(repeating: 2, count: 32))
        // Each side holds the connection it saw first and judges the other one: whichever came first, both
        // end with the connection a dialed (the lower ID).
        #expect(DuplicateConnection.replaces(newInitiator: a, existingInitiator: b))
        #expect(!DuplicateConnection.replaces(newInitiator: b, existingInitiator: a))
        // A redial by the device that dialed the live connection replaces it: to that device it is dead.
        #expect(DuplicateConnection.replaces(newInitiator: a, existingInitiator: a))
        #expect(DuplicateConnection.replaces(newInitiator: b, existingInitiator: b))
    }
}
