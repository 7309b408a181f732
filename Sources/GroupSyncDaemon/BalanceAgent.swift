import GroupSyncCore
import GroupSyncStore

/// The balance's hands in the daemon: when the balance suite changed (locally or from a peer) or the set of
/// connected peers did (`Daemon`; not on every write), it runs one `BalanceBook.rebalance` pass, which answers peers' requests for rights, spreads
/// quota and idle rights over the connected devices, and refunds expired day rights after a partition.
/// A pass that finds everything balanced writes nothing, so its own writes do not keep it awake.
enum BalanceAgent {
    /// `store` is the daemon's own connection, which signals nothing by itself: after writing, the
    /// agent posts the daemon's change `signal`, so the sessions send its writes at once (and local
    /// watchers see them); the next pass then finds nothing to do.
    ///
    /// Returns when to run again with no change to prompt it: when this device's own request to peers expires
    /// (`BalanceBook.ownRequestExpiryMillis`), while one is open; nil otherwise, so no timer runs.
    static func rebalance(store: Store, signal: ChangeSignal, connectedPeers: [PeerConnection], log: DaemonLog, nowMillis: Int64,
                        environment: [String: String]) -> Int64? {
        let connected = Set(connectedPeers.filter { $0.status.isEstablished }.map(\.peer))
        do {
            let (written, runAgainAt) = try store.updateBalance(nowMillis: nowMillis, environment: environment) { book -> (Int, Int64?) in
                book.rebalance(connected: connected)
                return (book.writes.count, book.ownRequestExpiryMillis)
            }
            if written > 0 {
                signal.post()
                log.write("event=balance-rebalanced writes=\(written) connected=\(connected.count)")
            }
            return runAgainAt
        } catch {
            log.write("event=balance-failed error=\"\(error)\"")
            return nil
        }
    }
}
