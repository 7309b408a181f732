import GroupSyncCore
import GroupSyncStore

/// Commits the control socket's writes through the daemon's one writing connection. Its callers are the
/// control loop, with a turn's writes of every client at once (`ControlServer`), and the loop's worker
/// threads, with the writes of a client whose lines wait behind a slower request. While one transaction is
/// being synced to disk, writes that arrive queue up and go into the next one: each caller still waits until
/// its own writes are durable, but callers waiting together cost one fsync.
///
/// Leader/follower, no committer thread: the caller that finds no commit in progress commits everything
/// queued itself, then hands the role on. A dedicated committer thread cost every write two extra thread
/// switches (hand the write over, hand the result back), and on two cores those switches, not the fsync,
/// bounded the rate. Enqueueing wakes nobody: waiters are woken only when results are published.
final class GroupCommitter: @unchecked Sendable {
    private struct Pending {
        let write: LocalWrite
        let ticket: Int
    }

    private let store: Store
    private let condition = Condition()
    private nonisolated(unsafe) var queue: [Pending] = []
    private nonisolated(unsafe) var results: [Int: Result<Change?, StoreError>] = [:]
    private nonisolated(unsafe) var nextTicket = 0
    /// True while some caller is committing; only that caller touches `store`.
    private nonisolated(unsafe) var leading = false

    /// Most writes in one transaction: large enough to amortize the fsync, small enough to keep each
    /// transaction's lock short for the other processes sharing the file.
    static let maxBatch = 2000

    init(store: Store) {
        self.store = store
    }

    /// Blocks until `writes` are durable (or failed), and returns their results in order. The writes must
    /// already be valid (`Store.validate`), so that none can make the batch it shares with others fail.
    func commit(_ writes: [LocalWrite]) -> [Result<Change?, StoreError>] {
        guard !writes.isEmpty else { return [] }
        return condition.locked {
            let first = nextTicket
            nextTicket += writes.count
            for (offset, write) in writes.enumerated() { queue.append(Pending(write: write, ticket: first + offset)) }
            let last = first + writes.count - 1
            while results[last] == nil {
                if leading {
                    condition.wait()
                } else {
                    leading = true
                    commitQueued()
                    leading = false
                    // Whoever still waits with writes queued takes over.
                    if !queue.isEmpty { condition.broadcastHoldingLock() }
                }
            }
            return (first...last).map { results.removeValue(forKey: $0)! }
        }
    }

    /// Commits what is queued, one batch; called with the lock held by the leader, which releases it while
    /// the transaction runs so that followers can queue the next batch meanwhile.
    private func commitQueued() {
        let batch = Array(queue.prefix(Self.maxBatch))
        queue.removeFirst(batch.count)
        let outcome = condition.unlocked { () -> Result<[Change?], StoreError> in
            do throws(StoreError) { return .success(try store.write(batch.map(\.write))) } catch { return .failure(error) }
        }
        for (index, pending) in batch.enumerated() {
            results[pending.ticket] = outcome.map { $0[index] }
        }
        condition.broadcastHoldingLock()
    }
}
