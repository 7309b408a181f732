import Testing
@testable import GroupSyncCore

/// A device whose store is moved aside comes back as a new account (device and store epoch): its old
/// records keep counting, it never spends what its old epoch held, and its share of the daily allowance
/// passes to the new epoch from the next day.
@Suite struct BalanceEpochTests {
    /// Two paired devices with a 30-minute day, the quota spread from yesterday: 15 minutes each today.
    func pair() -> [BalanceDevice] {
        let devices = pairedDevices(2)
        devices[0].setPolicy(BalancePolicy.Key.dailyBase, .double(30), at: noon - 2 * day)
        syncAll(devices, at: noon - day)
        for d in devices { d.act(at: noon - day) { $0.register() } }
        settle(devices, at: noon - day)
        return devices
    }

    @Test func theLedgerSumsEveryEpochOfEveryDeviceAndReadsLegacyKeys() {
        let a = BalanceDevice(1), b = BalanceDevice(2)
        let legacy = BalanceAccount(a.id), old = BalanceAccount(device: a.id, epoch: "old"), new = a.account
        var ledger = BalanceLedger()
        // Three stores of device a, one after the other: before epochs, a store moved aside, the current one.
        for (account, ms, at) in [(legacy, 7 * minute, noon - 2 * day), (old, 20 * minute, noon - day), (new, 3 * minute, noon)] {
            var book = BalanceBook(ledger: ledger, me: account, nowMillis: at, calendar: .utc)
            book.earn(ms, reason: "push-ups")
            ledger = book.ledger
        }
        for (key, value) in ledger.writes { a.store.set(value, suite: BalanceSuite.name, key: key, physicalMillis: noon) }
        b.act(at: noon) { $0.earn(5 * minute, reason: "") }
        sync(a, b, at: noon)
        let keys = Set(a.store.entries.map(\.key))
        #expect(keys.contains("earned.\(a.id)"), "the legacy form: device alone")
        #expect(keys.contains("earned.\(a.id)@old") && keys.contains("earned.\(a.id)@store-1"))

        let read = BalanceLedger(entries: a.store.entries)
        #expect(read.earned.count == 4)
        #expect(read.earned.values.reduce(0) { $0 + $1.ms } == 35 * minute)
        #expect(read.memberDevices == 2, "three epochs of one device are still one device")
        #expect(read.liveAccount(of: a.id) == new)
        #expect(read.isRetired(legacy) && read.isRetired(old) && !read.isRetired(new))
        let summary = BalanceBook(ledger: read, me: new, nowMillis: noon, calendar: .utc).summary
        #expect(summary.earnedMs == 35 * minute && summary.remainingMs == 35 * minute && summary.devices == 2)
        #expect(summary.heldHereMs == 3 * minute, "the new epoch holds only what it earned itself")
    }

    @Test func anAccountKeyIsCanonicalOrIgnored() {
        let id = BalanceDevice(1).id
        #expect(BalanceAccount(parsing: "\(id)@0123abcd") == BalanceAccount(device: id, epoch: "0123abcd"))
        #expect(BalanceAccount(parsing: "\(id)") == BalanceAccount(id))
        for bad in ["\(id)@", "\(id)@a.b", "\(id)@a@b", "\(id)@" + String(repeating: "f", count: 65),
                    "\(id)".lowercased() + "@x", "\(id)".replacingOccurrences(of: "-", with: "") + "@x", "@x"] {
            #expect(BalanceAccount(parsing: bad) == nil, "\(bad)")
        }
    }

    /// The defect of issue #6: a device whose store was moved aside used to rewrite its totals from zero,
    /// and the newer, smaller total won everywhere. Now its new epoch writes beside the old one.
    @Test func aStoreMovedAsideNeitherLosesNorInflatesTheBalance() {
        let devices = pair()
        let (a, b) = (devices[0], devices[1])
        a.act(at: noon) { $0.earn(40 * minute, reason: "") }
        a.act(at: noon) { _ = $0.spend(5 * minute) }
        settle(devices, at: noon)
        // 30 allowance + 40 earned − 5 spent, spread over both devices.
        #expect(b.summary(at: noon).remainingMs == 65 * minute)
        let oldAccount = a.account
        let oldHeld = a.summary(at: noon).heldHereMs
        #expect(oldHeld > 0)

        a.moveStoreAside(newStoreID: "store-1-again", group: devices)
        // Before it hears from anyone, the new store holds nothing and can spend nothing.
        #expect(a.act(at: noon + 1) { $0.spend(60 * minute) } == 0)
        a.act(at: noon + 2) { $0.earn(10 * minute, reason: "") }
        #expect(a.act(at: noon + 3) { $0.spend(4 * minute) } == 4 * minute, "what it earned itself it may spend")
        settle(devices, at: noon + 4)

        for d in devices {
            let s = d.summary(at: noon + 4)
            #expect(s.remainingMs == 71 * minute, "65 + 10 earned − 4 spent, on \(d.account.short)")
            #expect(s.earnedMs == 50 * minute)
            #expect(s.spentTodayMs == 9 * minute)
        }
        let ledger = b.book(at: noon + 4).ledger
        #expect(ledger.isRetired(oldAccount))
        #expect(ledger.heldMs(of: oldAccount, today: CivilDate(ordinal: noon / day)) == oldHeld,
                "what the old epoch held stays with it: counted, never spent twice")

        // Everything the live accounts can lay hands on, even asking each other, leaves the old epoch's part.
        var spent: Int64 = 0
        for _ in 0..<4 {
            for d in devices {
                d.act(at: noon + 5) { $0.request(holdMs: 200 * minute) }
                settle(devices, at: noon + 5)
                spent += d.act(at: noon + 5) { $0.spend(200 * minute) }
                settle(devices, at: noon + 5)
            }
        }
        #expect(spent == 71 * minute - oldHeld)
        let drained = b.summary(at: noon + 5)
        #expect(drained.remainingMs == oldHeld)
        // Minutes nobody can spend must not keep "time's up" away once everything spendable is gone.
        #expect(drained.strandedMs == oldHeld)
        #expect(drained.timeUp, "all that is left is held by a store moved aside")
        #expect(ledger.accounts.allSatisfy { ledger.earnedHeldMs(of: $0, today: CivilDate(ordinal: noon / day)) >= 0 })
    }

    @Test func theNewEpochDrawsTheOldEpochsAllowanceShareFromTheNextDay() {
        let devices = pair()
        let (a, b) = (devices[0], devices[1])
        let today = CivilDate(ordinal: noon / day)
        let oldAccount = a.account
        #expect(a.summary(at: noon).heldHereMs == 15 * minute)

        a.moveStoreAside(newStoreID: "store-1-again", group: devices)
        settle(devices, at: noon)
        let ledger = a.book(at: noon).ledger
        #expect(ledger.members[a.account]?.inheritsFrom == today.next)
        #expect(ledger.slices(of: a.account, on: today).isEmpty, "today's share may already be drawn by the old epoch")
        #expect(ledger.slices(of: oldAccount, on: today).count == QuotaSlices.total / 2)
        #expect(ledger.slices(of: a.account, on: today.next).count == QuotaSlices.total / 2)
        #expect(ledger.slices(of: oldAccount, on: today.next).isEmpty)
        #expect(a.summary(at: noon).allowanceMs == 30 * minute, "today's allowance still counts in full")

        settle(devices, at: noon + day)
        for d in devices {
            let s = d.summary(at: noon + day)
            #expect(s.allowanceMs == 30 * minute && s.heldHereMs == 15 * minute, "\(d.account.short)")
        }
        // The quota stays whole when the new epoch spreads it: no slice is owned twice.
        let later = b.book(at: noon + 3 * day).ledger
        let owners = later.sliceOwners(on: CivilDate(ordinal: (noon + 3 * day) / day))
        #expect(owners.values.reduce(0) { $0 + $1.count } == QuotaSlices.total)
        #expect(b.summary(at: noon + 3 * day).allowanceMs == 30 * minute)
    }

    @Test func aFounderMovedAsideHandsItsWholeQuotaOnAndAThirdEpochFollowsTheChain() {
        let solo = pairedDevices(1)[0]
        solo.setPolicy(BalancePolicy.Key.dailyBase, .double(20), at: noon - day)
        solo.act(at: noon) { $0.register() }
        let witness = BalanceDevice(9)
        let group = [solo, witness]
        sync(solo, witness, at: noon)

        solo.moveStoreAside(newStoreID: "second", group: group)
        sync(solo, witness, at: noon + 1)
        solo.act(at: noon + 1) { $0.register() }
        sync(solo, witness, at: noon + day)
        #expect(solo.summary(at: noon + day).heldHereMs == 20 * minute)

        solo.moveStoreAside(newStoreID: "third", group: group)
        sync(solo, witness, at: noon + day + 1)
        solo.act(at: noon + day + 1) { $0.register() }
        sync(solo, witness, at: noon + 2 * day)
        let ledger = solo.book(at: noon + 2 * day).ledger
        #expect(ledger.slices(of: solo.account, on: CivilDate(ordinal: (noon + 2 * day) / day)) == .whole)
        #expect(solo.summary(at: noon + 2 * day).allowanceMs == 20 * minute)
    }
}
