import Foundation
import Testing
import GroupSyncCore
@testable import GroupSyncStore

/// Waiting for another connection's write lock: short naps first, and a give-up only after the timeout.
@Suite struct BusyWaitTests {
    @Test func napsStartShortAndTheWaitEndsAfterTheTimeout() throws {
        // A transaction here holds the lock for about one fsync (well under a millisecond): the first naps must
        // be far shorter, or the waiter sleeps while the lock sits free.
        #expect(BusyWait.napMicros(attempt: 0) <= 50)
        #expect((0..<BusyWait.shortNaps + BusyWait.mediumNaps).allSatisfy { BusyWait.napMicros(attempt: $0) <= 100 })
        var totalMicros = 0
        var attempt = 0
        while case let nap = BusyWait.napMicros(attempt: attempt), nap > 0 {
            totalMicros += nap
            attempt += 1
        }
        let seconds = Double(totalMicros) / 1e6
        #expect(seconds >= 119 && seconds <= 121, "gives up after \(seconds) s")
        let folder = TemporaryFolder()
        #expect(BusyWait.shouldRetry(attempt: Int32(attempt), database: try SQLiteDatabase(path: folder.path + "/store.db")) == 0)
        // The wait is told of (`LockWait`) once it has lasted about a second.
        let beforeNotice = (0..<BusyWait.noticeAttempt).reduce(0) { $0 + BusyWait.napMicros(attempt: $1) }
        #expect(beforeNotice >= 990_000 && beforeNotice <= 1_010_000, "told after \(beforeNotice) µs")
    }

    @Test func aWriterWaitsForAnotherConnectionsTransactionAndThenSucceeds() throws {
        let folder = TemporaryFolder()
        let path = folder.path + "/store.db"
        let holder = try Store(path: path, device: StoreTests.me)
        let writer = try Store(path: path, device: StoreTests.me)
        let locked = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let holderBox = UncheckedBox(holder)
        Thread.detachNewThread {
            do {
                try holderBox.value.database.transaction(immediate: true) { () throws(StoreError) in
                    locked.signal()
                    usleep(30_000)
                }
            } catch {
                Issue.record("the holder's transaction failed: \(error)")
                locked.signal()
            }
            done.signal()
        }
        // Bounded, so that a holder that never starts fails this test instead of stalling the run.
        try #require(locked.wait(timeout: .now() + 10) == .success)
        let change = try writer.set(.int(1), suite: "group.test", key: "k")
        try #require(done.wait(timeout: .now() + 10) == .success)
        #expect(try writer.entry(suite: "group.test", key: "k")?.value == .int(1))
        #expect(change.sequence == 1)
    }
}

private struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
