import Glibc

/// How a connection waits for another's write lock: short naps first, longer ones only if the wait drags on.
///
/// SQLite's own `busy_timeout` sleeps 1, 2, 5, 10 … 100 ms between tries. Most transactions here hold the
/// lock for well under a millisecond (one fsync), so its first nap alone outlasted the wait it was for:
/// a daemon thread that met the bench's commit slept a whole millisecond while the lock sat free — the
/// largest part of the write-to-peer latency — and eight writers took turns sleeping instead of writing.
/// Naps of 20 µs, then 100 µs, then 1 ms cost a waiting thread a little CPU, and an idle one nothing.
/// Writers of this store queue on `WriterLock` first, so this wait is for the rare contention it does not
/// cover (a checkpoint, another program on the file).
enum BusyWait {
    /// Whether to try again after `attempt` failed tries (SQLite counts from 0), napping first; false ends
    /// the wait with SQLITE_BUSY, after about `SQLiteDatabase.busyTimeoutMillis`.
    static func shouldRetry(attempt: Int32, database: SQLiteDatabase) -> Int32 {
        let nap = napMicros(attempt: Int(attempt))
        guard nap > 0 else { return 0 }
        // SQLite's write lock is a POSIX lock on the log's shared index: looked at twice, a second apart (`LockWait`).
        if LockWait.notice != nil, Int(attempt) == noticeAttempt || Int(attempt) == noticeAttempt + LockWait.noticeAfterMillis {
            let index = database.path + "-shm"
            if Int(attempt) == noticeAttempt {
                database.lockHoldersSeen = LockHolders.processes(writeLocking: index, kind: .posix)
            } else {
                LockWait.tell(stillHolding: database.lockHoldersSeen, index, kind: .posix)
            }
        }
        usleep(UInt32(nap))
        return 1
    }

    static let shortNaps = 25, mediumNaps = 100

    /// The try after which the wait has lasted about `LockWait.noticeAfterMillis` (the first look at who holds
    /// the lock; the second is as many 1 ms naps later).
    static let noticeAttempt = shortNaps + mediumNaps + LockWait.noticeAfterMillis - (shortNaps * 20 + mediumNaps * 100) / 1000

    /// The nap before try `attempt + 1`, in µs; 0 once the timeout is spent.
    static func napMicros(attempt: Int) -> Int {
        let spentAfterShortAndMedium = shortNaps * 20 + mediumNaps * 100
        if attempt < shortNaps { return 20 }
        if attempt < shortNaps + mediumNaps { return 100 }
        let longNaps = attempt - shortNaps - mediumNaps
        return spentAfterShortAndMedium / 1000 + longNaps < SQLiteDatabase.busyTimeoutMillis ? 1000 : 0
    }
}
