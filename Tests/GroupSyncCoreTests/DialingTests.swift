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
