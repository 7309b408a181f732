/// A device handing some of its quota slices to another, from a future day on.
///
/// Why from a *future* day: the giver may already have drawn today's allowance from those slices. It
/// gives them from the day after any day it has drawn on, so no day's slice is ever drawn twice, and
/// the receiver's share grows only for days the giver can no longer draw. Gifts are listed under the
/// giver's own key and only ever appended to.
public struct QuotaGift: Equatable, Sendable {
    public var to: BalanceAccount
    /// The founder whose quota these slices are (see `Membership`).
    public var root: BalanceAccount
    public var slices: Range<Int64>
    public var fromDay: CivilDate

    public init(to: BalanceAccount, root: BalanceAccount, slices: Range<Int64>, fromDay: CivilDate) {
        self.to = to
        self.root = root
        self.slices = slices
        self.fromDay = fromDay
    }

    var value: Value {
        .dictionary([
            "to": .string(to.description), "root": .string(root.description),
            "start": .int(slices.lowerBound), "end": .int(slices.upperBound), "fromDay": .string(fromDay.description),
        ])
    }

    init?(_ value: Value) {
        guard case .dictionary(let d) = value,
              let to = d["to"]?.account, let root = d["root"]?.account,
              let start = d["start"]?.intValue, let end = d["end"]?.intValue,
              case .string(let day)? = d["fromDay"], let fromDay = CivilDate(parsing: day) else { return nil }
        // Only slices of the quota exist: a range reaching past it gives or takes nothing more.
        let slices = min(max(start, 0), QuotaSlices.total)..<max(min(end, QuotaSlices.total), min(max(start, 0), QuotaSlices.total))
        guard !slices.isEmpty else { return nil }
        self.init(to: to, root: root, slices: slices, fromDay: fromDay)
    }
}

/// A device taking part in the balance.
///
/// Exactly one device should *found* the balance: it starts with all the quota slices and spreads
/// them to the others by gifts. A device founds only if it knows no founder, has caught up with every
/// device it is paired with at least once (read its history up to the head it announced, so it would
/// know of an existing founder; a first batch is not enough, found by the simulator), and has the
/// smallest ID among the members and paired devices it knows. Two devices that founded apart before
/// ever meeting both minted allowance for those days; once they meet, the earlier founder (by
/// `joinedAt`, then ID) is the root for every later day and the other's slices stop counting.
///
/// Membership is per account (device and store epoch). A device's later epoch inherits its earlier
/// epoch's slices from `inheritsFrom`: the local day after the one it joined on, counted from 5 minutes
/// later (the clock bound), so it never draws a day the earlier epoch may already have drawn.
public struct Membership: Equatable, Sendable {
    public var joinedAt: Int64
    public var founder: Bool
    public var inheritsFrom: CivilDate?

    public init(joinedAt: Int64, founder: Bool, inheritsFrom: CivilDate? = nil) {
        self.joinedAt = joinedAt
        self.founder = founder
        self.inheritsFrom = inheritsFrom
    }

    /// The first day this account draws an earlier epoch's slices. A record without the field (written
    /// before epochs) falls back to two UTC days after `joinedAt`, later than the local day in any zone.
    var inheritanceDay: CivilDate {
        inheritsFrom ?? CivilDate(ordinal: (min(max(joinedAt, 0), 1 << 50) + HybridClock.defaultMaxForwardDriftMillis) / 86_400_000 + 2)
    }

    var value: Value {
        var fields: [String: Value] = ["joinedAt": .int(joinedAt), "founder": .bool(founder)]
        if let inheritsFrom { fields["inheritsFrom"] = .string(inheritsFrom.description) }
        return .dictionary(fields)
    }

    init?(_ value: Value) {
        guard case .dictionary(let d) = value, d["joinedAt"]?.intValue != nil else { return nil }
        self.init(joinedAt: d.instant("joinedAt"), founder: d["founder"] == .bool(true), inheritsFrom: d["inheritsFrom"]?.stringValue.flatMap(CivilDate.init(parsing:)))
    }
}
