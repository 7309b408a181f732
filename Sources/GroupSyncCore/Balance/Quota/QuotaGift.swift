/// A device handing some of its quota slices to another, from a future day on.
///
/// Why from a *future* day: the giver may already have drawn today's allowance from those slices. It
/// gives them from the day after any day it has drawn on, so no day's slice is ever drawn twice, and
/// the receiver's share grows only for days the giver can no longer draw. Gifts are listed under the
/// giver's own key and only ever appended to.
public struct QuotaGift: Equatable, Sendable {
    public var to: DeviceID
    /// The founder whose quota these slices are (see `Membership`).
    public var root: DeviceID
    public var slices: Range<Int64>
    public var fromDay: CivilDate

    public init(to: DeviceID, root: DeviceID, slices: Range<Int64>, fromDay: CivilDate) {
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
              let to = d["to"]?.deviceID, let root = d["root"]?.deviceID,
              let start = d["start"]?.intValue, let end = d["end"]?.intValue, start < end,
              case .string(let day)? = d["fromDay"], let fromDay = CivilDate(parsing: day) else { return nil }
        self.init(to: to, root: root, slices: start..<end, fromDay: fromDay)
    }
}

/// A device taking part in the balance.
///
/// Exactly one device should *found* the balance: it starts with all the quota slices and spreads
/// them to the others by gifts. A device founds only if it knows no founder, has exchanged data with
/// every device it is paired with at least once (so it would know of an existing founder), and has the
/// smallest ID among the members and paired devices it knows. Two devices that founded apart before
/// ever meeting both minted allowance for those days; once they meet, the earlier founder (by
/// `joinedAt`, then ID) is the root for every later day and the other's slices stop counting.
public struct Membership: Equatable, Sendable {
    public var joinedAt: Int64
    public var founder: Bool

    public init(joinedAt: Int64, founder: Bool) {
        self.joinedAt = joinedAt
        self.founder = founder
    }

    var value: Value { .dictionary(["joinedAt": .int(joinedAt), "founder": .bool(founder)]) }

    init?(_ value: Value) {
        guard case .dictionary(let d) = value, let joinedAt = d["joinedAt"]?.intValue else { return nil }
        self.init(joinedAt: joinedAt, founder: d["founder"] == .bool(true))
    }
}
