/// The balance as one device acts on it: the ledger it sees, who it is, and what time it is.
///
/// Every operation changes the ledger in memory and marks the keys to write; the shell reads the
/// suite, runs one operation and writes `ledger.writes` in one store transaction, so two processes
/// on the same machine cannot both spend the same rights.
public struct BalanceBook: Sendable {
    public var ledger: BalanceLedger
    /// This device as the store it writes from: every record it writes is keyed by this account.
    public let me: BalanceAccount
    public let nowMillis: Int64
    /// The latest time this device knows has passed (the store gives its hybrid clock, which every write made
    /// or merged moves), below which `today` never goes. A clock set back would otherwise reopen a past day
    /// whose allowance was left unused: the classic way round a screen-time limit.
    public let notBeforeMillis: Int64
    public let calendar: LocalCalendar
    /// Devices this one is paired with, and whether it has caught up with each one at least once (read its
    /// history up to the head its hello announced, `ReplicaStore.hasCaughtUp`; a first batch is not enough):
    /// only then would it know of an existing founder (see `Membership`).
    public let paired: Set<DeviceID>
    public let syncedWithAllPaired: Bool

    public init(ledger: BalanceLedger, me: BalanceAccount, nowMillis: Int64, notBeforeMillis: Int64 = .min, calendar: LocalCalendar,
                paired: Set<DeviceID> = [], syncedWithAllPaired: Bool = true) {
        self.ledger = ledger
        self.me = me
        self.nowMillis = nowMillis
        self.notBeforeMillis = notBeforeMillis
        self.calendar = calendar
        self.paired = paired
        self.syncedWithAllPaired = syncedWithAllPaired
    }

    /// The day the clock says, or the day of `notBeforeMillis` when the clock was set back before it. (A peer
    /// whose clock is ahead, within the drift a session accepts, can make the day turn that much early here.)
    public var today: CivilDate { calendar.day(atUTCMillis: max(nowMillis, notBeforeMillis)) }

    public var writes: [String: Value] { ledger.writes }

    /// Today's picture, as this device sees it.
    public var summary: BalanceSummary { BalanceSummary(ledger: ledger, me: me, today: today, calendar: calendar) }

    // MARK: Membership

    /// Joins the balance (once per store epoch), founding it if this device is the one that should (see
    /// `Membership`). A device that joins again from a new store is a new account: it inherits its earlier
    /// epochs' quota slices from `inheritsFrom` on (see `BalanceLedger+Epochs`).
    public mutating func register() {
        let knownFounder = ledger.members.values.contains(where: \.founder)
        let candidates = Set(ledger.members.keys.map(\.device)).union(paired).union([me.device])
        let shouldFound = !knownFounder && syncedWithAllPaired && candidates.min() == me.device
        if var membership = ledger.members[me] {
            if !membership.founder && shouldFound {
                membership.founder = true
                ledger.setMembership(membership, of: me)
            }
        } else {
            let inheritsFrom = calendar.day(atUTCMillis: nowMillis + HybridClock.defaultMaxForwardDriftMillis).next
            ledger.setMembership(Membership(joinedAt: nowMillis, founder: shouldFound, inheritsFrom: inheritsFrom), of: me)
        }
    }

    // MARK: Own records

    /// This device's record for `day`, with its draw filled in: drawn at the current share if the day
    /// has no record yet, raised to it if the day is today.
    func ownRecord(_ day: CivilDate) -> DeviceDayRecord {
        var record = ledger.days[me]?[day] ?? DeviceDayRecord()
        record.allowanceMs = ledger.allowanceDrawMs(of: me, on: day, today: today)
        record.slots = ledger.slotDraw(of: me, on: day, today: today)
        return record
    }

    /// Records this device's draw for `day` before it hands on or spends rights from it, so a later
    /// policy cut cannot shrink a draw that is already in use.
    mutating func freezeDraw(_ day: CivilDate) {
        let record = ownRecord(day)
        if ledger.days[me]?[day] != record { ledger.setDayRecord(record, of: me, day: day) }
    }

    /// The first day a quota gift by this device may take effect: after every day it has drawn on,
    /// and not before it owns what it gives (an earlier epoch's slices are its own from `inheritsFrom`).
    var nextGiftDay: CivilDate {
        var latest = max(today, ledger.days[me]?.keys.max() ?? today)
        if ledger.successions.contains(where: { $0.to == me }), let inherited = ledger.members[me]?.inheritanceDay {
            latest = max(latest, inherited.previous)
        }
        for (giver, list) in ledger.gifts where giver != me {
            for gift in list where gift.to == me && gift.fromDay > latest { latest = gift.fromDay.previous }
        }
        return latest.next
    }
}
