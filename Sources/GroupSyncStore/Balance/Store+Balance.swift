import GroupSyncCore

/// Runs balance operations against the store: read the balance suite, act, write, in one transaction.
extension Store {
    /// Opens the balance as this device sees it at `nowMillis`, lets `operate` act on it, and stores
    /// what it changed, atomically. The policy's time zone is loaded here (the core reads no files).
    public func updateBalance<T>(nowMillis: Int64, environment: [String: String] = [:],
                                 _ operate: (inout BalanceBook) -> T) throws(BalanceStoreError) -> T {
        var zoneError: TimeZoneError?
        let result: T?
        do throws(StoreError) {
            result = try update(suite: BalanceSuite.name, writing: { entries throws(StoreError) -> (writes: [String: Value], result: T?) in
                let ledger = BalanceLedger(entries: entries)
                let calendar: LocalCalendar
                do throws(TimeZoneError) {
                    calendar = try ZoneInfo.calendar(named: ledger.policy.timeZone, environment: environment)
                } catch {
                    zoneError = error
                    return ([:], nil)
                }
                let paired = try pairedDevices().map(\.id)
                var synced = true
                for peer in paired where try !hasCaughtUp(peer: peer) { synced = false }
                // The store's hybrid clock is the latest time this device has seen (its writes and its peers'):
                // the balance's day does not go back before it when the clock is set back. (A floor from the
                // boot clock was tried too and taken out: it kept a clock that was ahead for a moment, or at
                // boot before NTP stepped it back, as the floor for the whole uptime.)
                var book = BalanceBook(ledger: ledger, me: BalanceAccount(device: device, epoch: balanceEpoch), nowMillis: nowMillis,
                                       notBeforeMillis: try currentClock().wallMillis, calendar: calendar,
                                       paired: Set(paired), syncedWithAllPaired: synced)
                let result = operate(&book)
                return (book.writes, result)
            })
        } catch {
            throw .store(error)
        }
        if let zoneError { throw .timeZone(ledgerZoneMessage(zoneError)) }
        return result!
    }

    private func ledgerZoneMessage(_ error: TimeZoneError) -> String {
        "the balance policy's time zone cannot be used on this device: \(error)"
    }
}

public enum BalanceStoreError: Error, CustomStringConvertible {
    case store(StoreError)
    case timeZone(String)

    public var description: String {
        switch self {
        case .store(let error): error.description
        case .timeZone(let text): text
        }
    }
}
