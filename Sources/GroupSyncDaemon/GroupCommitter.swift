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

    /// Blocks until `write` is durable (or failed). The write must already be valid (`Store.validate`),
    /// so that it cannot make the batch it shares with others fail.
    func commit(_ write: LocalWrite) -> Result<Change?, StoreError> {
        condition.locked {
            let ticket = nextTicket
            nextTicket += 1
            queue.append(Pending(write: write, ticket: ticket))
            condition.signalAll()
            while results[ticket] == nil { condition.wait(millis: 1000) }
            return results.removeValue(forKey: ticket)!
        }
    }

    func stop() {
        condition.locked { running = false }
        condition.broadcast()
    }

    private func commitLoop() {
        while true {
            let batch: [Pending] = condition.locked {
                while queue.isEmpty && running { condition.wait(millis: 60_000) }
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
