import GroupSyncCore
import GroupSyncStore

/// Commits local writes from many clients of the control socket together: while one transaction is being
/// synced to disk, the writes that arrive queue up and go into the next one. Each client still waits until
/// its own write is durable, but N waiting clients cost one fsync, not N.
///
/// Leader/follower, no committer thread: the client thread that finds no commit in progress commits
/// everything queued itself, then hands the role on. A dedicated committer thread cost every write two extra
/// thread switches (hand the write over, hand the result back), and on two cores those switches, not the
/// fsync, bounded the rate. Enqueueing wakes nobody: waiters are woken only when results are published.
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
    /// True while some client thread is committing; only that thread touches `store`.
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
                    if !queue.isEmpty { condition.signalAll() }
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
        condition.signalAll()
    }
}
