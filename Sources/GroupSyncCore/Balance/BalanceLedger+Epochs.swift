/// How a device's epochs follow one another (see `BalanceAccount`).
///
/// Each store a device writes from is an account of its own; its records are never rewritten by a later
/// one, so every epoch's earnings and spending count for ever. What an epoch *holds* stays with it: its
/// unspent earned rights, today's day rights and the rights handed to it are counted in the balance, but
/// no other epoch spends them, because no other epoch can know it has seen the last of the old epoch's
/// spending — a spend recorded just before the store was moved aside may still be on its way from a peer.
///
/// Quota slices are different: they are drawn a day at a time, and an epoch that is gone draws no day
/// after the one it died on. So a device's later epoch inherits its earlier epoch's slices from the day
/// after it joined (`Membership.inheritsFrom`, with the 5-minute clock margin), and the device's share of
/// the daily allowance continues; only the reset day's share stays with the old epoch.
extension BalanceLedger {
    /// Who inherits whose slices, and from which day: each member account's slices pass to the next
    /// member account of the same device, by `(joinedAt, account)`.
    var successions: [(from: BalanceAccount, to: BalanceAccount, fromDay: CivilDate)] {
        var result: [(from: BalanceAccount, to: BalanceAccount, fromDay: CivilDate)] = []
        for lives in epochsByDevice.values {
            for (earlier, later) in zip(lives, lives.dropFirst()) {
                result.append((earlier, later, members[later]!.inheritanceDay))
            }
        }
        return result
    }

    /// Each device's member accounts, earliest first.
    var epochsByDevice: [DeviceID: [BalanceAccount]] {
        var byDevice: [DeviceID: [BalanceAccount]] = [:]
        for account in members.keys { byDevice[account.device, default: []].append(account) }
        return byDevice.mapValues { accounts in
            accounts.sorted { (members[$0]!.joinedAt, $0) < (members[$1]!.joinedAt, $1) }
        }
    }

    /// The account `device` writes from now: its latest member account.
    public func liveAccount(of device: DeviceID) -> BalanceAccount? { epochsByDevice[device]?.last }

    /// Whether a later epoch of the same device has joined: the account writes nothing more.
    public func isRetired(_ account: BalanceAccount) -> Bool {
        guard let lives = epochsByDevice[account.device], let last = lives.last else { return false }
        return lives.contains(account) && last != account
    }

    /// Member accounts that are not retired: one per device.
    public var liveMembers: [BalanceAccount] { epochsByDevice.values.compactMap(\.last).sorted() }

    /// How many devices take part (however many epochs each has had).
    public var memberDevices: Int { Set(members.keys.map(\.device)).count }
}
