import GroupSyncCore
import GroupSyncStore

/// Commits local writes from many clients of the control socket together: while one transaction is being
/// synced to disk, the writes that arrive queue up and go into the next one. Each client still waits until
/// its own write is durable, but N waiting clients cost one fsync, not N.
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
    private nonisolated(unsafe) var running = true

    /// Most writes in one transaction: large enough to amortize the fsync, small enough to keep each
    /// transaction's lock short for the other processes sharing the file.
    static let maxBatch = 2000

    init(store: Store) {
        self.store = store
        spawnThread { [self] in commitLoop() }
    }

    /// Blocks until `writes` are durable (or failed), and returns their results in order. The writes must
    /// already be valid (`Store.validate`), so that none can make the batch it shares with others fail.
    func commit(_ writes: [LocalWrite]) -> [Result<Change?, StoreError>] {
        guard !writes.isEmpty else { return [] }
        return condition.locked {
            let first = nextTicket
            nextTicket += writes.count
            for (offset, write) in writes.enumerated() { queue.append(Pending(write: write, ticket: first + offset)) }
            condition.signalAll()
            let last = first + writes.count - 1
            while results[last] == nil { condition.wait() }
            return (first...last).map { results.removeValue(forKey: $0)! }
        }
    }

    func stop() {
        condition.locked { running = false }
        condition.broadcast()
    }

    private func commitLoop() {
        while true {
            let batch: [Pending] = condition.locked {
                while queue.isEmpty && running { condition.wait() }
                let batch = Array(queue.prefix(Self.maxBatch))
                queue.removeFirst(batch.count)
                return batch
            }
            if batch.isEmpty { return }
            let outcome: Result<[Change?], StoreError>
            do { outcome = .success(try store.write(batch.map(\.write))) } catch { outcome = .failure(error) }
            condition.locked {
                for (index, pending) in batch.enumerated() {
                    results[pending.ticket] = outcome.map { $0[index] }
                }
                condition.signalAll()
            }
        }
    }
}
