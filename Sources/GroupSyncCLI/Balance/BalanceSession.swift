import GroupSyncCore
import GroupSyncDaemon
import GroupSyncStore

/// The CLI's side of the balance: run one operation in a store transaction, and, when this device
/// lacks rights that connected peers hold, ask for them and wait briefly for the daemons to answer.
struct BalanceSession {
    let context: DeviceContext
    let environment: [String: String]

    /// The longest a command waits for peers to hand over rights.
    static let maxWaitMillis: Int64 = 2_000
    /// Once answers have started arriving, this much quiet means the peers are done.
    static let quietMillis: Int64 = 250

    func update<T>(_ operate: (inout BalanceBook) -> T) throws(CLIError) -> T {
        do {
            return try context.store.updateBalance(nowMillis: WallClock.nowMillis(), environment: environment, operate)
        } catch {
            switch error {
            case .store(let storeError): throw storeError.asCLIError
            case .timeZone(let text): throw .failure(text)
            }
        }
    }

    /// Whether the daemon runs and has at least one peer session up.
    var hasConnectedPeers: Bool {
        guard let json = ControlClient.request(home: context.home, #"{"command":"status"}"#),
              case .dictionary(let status)? = try? JSONParser.parse(json, nullMembers: .omittedEverywhere), case .array(let peers)? = status["peers"] else { return false }
        return peers.contains { peer in
            if case .dictionary(let p) = peer { return p["connected"] == .bool(true) }
            return false
        }
    }

    /// Runs `body` (a command that may ask peers for rights, then use them) while no other command of this
    /// device does: a device has one request to its peers at a time (`BalanceBook.request`), so two commands
    /// asking at once overwrote or withdrew each other's, and one could use the rights the other had asked
    /// for (found by audit: of six parallel `spend 8` with 60 minutes to be had, one got 2). Commands that
    /// wait for peers (up to `maxWaitMillis` each) therefore take turns.
    func takingTurns<T>(_ body: () throws(CLIError) -> T) throws(CLIError) -> T {
        try HomeLock.exclusively(context.home.path + "/balance.lock", body)
    }

    /// Writes a request with `ask`, then waits (at most `maxWaitMillis`) until `satisfied` holds, or the
    /// peers, having started to answer, fall quiet. Returns without waiting when no peer is connected.
    func askPeers(_ ask: (inout BalanceBook) -> Void, until satisfied: (BalanceBook) -> Bool) throws(CLIError) {
        guard hasConnectedPeers else { return }
        let watcher: ChangeWatcher
        do { watcher = try ChangeWatcher(home: context.home) } catch { throw .failure(error.description) }
        try update(ask)
        var position: Int64
        do { position = try context.store.lastSequence() } catch { throw error.asCLIError }
        let deadline = WallClock.nowMillis() + Self.maxWaitMillis
        var heardBack = false
        while true {
            if try update({ satisfied($0) }) { return }
            let now = WallClock.nowMillis()
            guard now < deadline else { return }
            let wait = heardBack ? min(Self.quietMillis, deadline - now) : deadline - now
            switch watcher.wait(timeoutMillis: Int32(wait)) {
            case .changed:
                // Our own daemon's writes do not count as an answer; a peer's balance records do.
                do {
                    let changes = try context.store.changes(after: position, limit: .max)
                    position = changes.last?.sequence ?? position
                    if changes.contains(where: { $0.entry.suite == BalanceSuite.name && $0.entry.version.origin != context.deviceID }) {
                        heardBack = true
                    }
                } catch { throw error.asCLIError }
            case .timedOut, .woken, .outputClosed:
                if heardBack { return }
            }
        }
    }
}
