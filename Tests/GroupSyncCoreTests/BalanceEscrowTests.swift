import Testing
@testable import GroupSyncCore

/// Several devices: quota spreading, requests while connected, partitions, refunds, extension slots.
@Suite struct BalanceEscrowTests {
    func group(_ count: UInt8, base: Double = 60, maxExtensions: Int64 = 5) -> [BalanceDevice] {
        let devices = pairedDevices(count)
        devices[0].setPolicy(BalancePolicy.Key.dailyBase, .double(base), at: noon - 2 * day)
        devices[0].setPolicy(BalancePolicy.Key.maxExtensions, .int(maxExtensions), at: noon - 2 * day)
        // Everyone joins the day before, and the founder spreads the quota from the day after.
        let yesterday = noon - day
        syncAll(devices, at: yesterday)
        for d in devices { d.act(at: yesterday) { $0.register() } }
        settle(devices, at: yesterday)
        return devices
    }

    @Test func onlyTheSmallestPairedDeviceFoundsAndTheQuotaIsSpreadEvenly() {
        let devices = group(3)
        let book = devices[2].book(at: noon)
        #expect(book.ledger.root == devices[0].account)
        #expect(book.ledger.members.values.filter(\.founder).count == 1)
        for d in devices {
            #expect(book.ledger.slices(of: d.account, on: CivilDate(ordinal: noon / day)).count == QuotaSlices.total / 3)
            #expect(d.summary(at: noon).heldHereMs == 20 * minute)
        }
        #expect(devices[1].summary(at: noon).remainingMs == 60 * minute)
    }

    @Test func aDeviceThatHasNotHeardFromItsPeersDoesNotFound() {
        let a = BalanceDevice(1), b = BalanceDevice(2)
        a.paired = [b.id]
        var book = BalanceBook(ledger: BalanceLedger(), me: a.account, nowMillis: noon, calendar: .utc, paired: [b.id], syncedWithAllPaired: false)
        book.register()
        #expect(book.ledger.members[a.account]?.founder == false)
        book = BalanceBook(ledger: book.ledger, me: a.account, nowMillis: noon, calendar: .utc, paired: [b.id], syncedWithAllPaired: true)
        book.register()
        #expect(book.ledger.members[a.account]?.founder == true, "once synced, the smallest ID founds")
    }

    @Test func whileConnectedOneDeviceCanSpendTheWholeBalanceByAsking() {
        let devices = group(3)
        devices[1].act(at: noon) { $0.earn(6 * minute, reason: "") }
        settle(devices, at: noon)
        let ask = devices[0]
        ask.act(at: noon + 1) { $0.request(holdMs: 66 * minute) }
        settle(devices, at: noon + 1)
        #expect(ask.summary(at: noon + 2).heldHereMs == 66 * minute)
        #expect(ask.act(at: noon + 2) { $0.spend(66 * minute) } == 66 * minute)
        settle(devices, at: noon + 3)
        for d in devices {
            let s = d.summary(at: noon + 3)
            #expect(s.remainingMs == 0)
            #expect(s.timeUp)
        }
    }

    @Test func idleRightsAreSpreadSoEachConnectedDeviceHoldsAnEvenShare() {
        let devices = group(2)
        devices[0].act(at: noon) { $0.earn(30 * minute, reason: "") }
        devices[1].act(at: noon) { $0.spend(30 * minute) }
        settle(devices, at: noon)
        // 60 allowance − 30 spent + 30 earned = 60, spread 30/30 (15 day + 15 earned each).
        for d in devices { #expect(d.summary(at: noon).heldHereMs == 30 * minute) }
    }

    @Test func partitionedDevicesSpendOnlyWhatTheyHoldAndHealingCountsEverySpendOnce() {
        let devices = group(2)
        let (a, b) = (devices[0], devices[1])
        // Partition: each tries to spend everything.
        #expect(a.act(at: noon) { $0.spend(60 * minute) } == 30 * minute)
        #expect(b.act(at: noon) { $0.spend(60 * minute) } == 30 * minute)
        #expect(a.act(at: noon + 1) { $0.spend(minute) } == 0, "an offline double-spend is refused")
        #expect(a.summary(at: noon + 1).remainingMs == 30 * minute, "a still counts b's unspent share")
        settle(devices, at: noon + 2)
        for d in devices {
            let s = d.summary(at: noon + 2)
            #expect(s.spentTodayMs == 60 * minute)
            #expect(s.remainingMs == 0)
            #expect(s.allowanceMs + s.extensionMs + s.earnedMs - s.spentTodayMs == 0)
        }
    }

    @Test func earnedMinutesSpentOfflineWhileAnotherDeviceHeldIdleAllowanceAreGivenBack() {
        let devices = group(2)
        let a = devices[0]
        a.act(at: noon) { $0.earn(20 * minute, reason: "") }
        // Partitioned all day: a spends its 30 and 10 earned; b spends nothing.
        #expect(a.act(at: noon) { $0.spend(40 * minute) } == 40 * minute)
        #expect(a.summary(at: noon + day).earnedMs == 10 * minute, "alone, a sees its earned minutes spent")
        // Next day they meet: b's expired allowance covers a's overflow, so the earned minutes come back.
        settle(devices, at: noon + day)
        for d in devices {
            let s = d.summary(at: noon + day)
            #expect(s.earnedMs == 20 * minute)
            #expect(s.remainingMs == 80 * minute)
        }
    }

    @Test func twoOfflineDevicesCannotBothTakeTheLastExtension() {
        let devices = group(2, maxExtensions: 3)
        let (a, b) = (devices[0], devices[1])
        // Slots are split 1 / 2 by the quota slices; offline each can use only its own.
        var granted = 0
        for d in [a, b] { for _ in 0..<3 { if case .granted = d.act(at: noon, { $0.extend() }) { granted += 1 } } }
        #expect(granted == 3)
        settle(devices, at: noon)
        #expect(a.summary(at: noon).extensionsToday == 3)
        #expect(a.act(at: noon) { $0.extend() } == .capReached(used: 3, max: 3))
    }

    func granted(_ outcome: BalanceBook.ExtendOutcome) -> Bool { if case .granted = outcome { true } else { false } }

    /// Free extension slots are idle rights too: while connected they are spread evenly, so a device that used
    /// its own can still extend once it goes offline, and the cap still holds across the partition (found by
    /// review: slots moved only on request, and one device could hold every one left).
    @Test func freeExtensionSlotsAreSpreadLikeIdleMinutes() {
        let devices = group(2, maxExtensions: 4)
        let (a, b) = (devices[0], devices[1])
        for _ in 0..<2 { #expect(granted(a.act(at: noon) { $0.extend() })) }
        #expect(a.summary(at: noon).extensionSlotsHere == 0 && b.summary(at: noon).extensionSlotsHere == 2)
        settle(devices, at: noon)
        #expect(a.summary(at: noon).extensionSlotsHere == 1 && b.summary(at: noon).extensionSlotsHere == 1)
        // Partitioned now: each takes the one it holds, and no more.
        for d in [a, b] {
            #expect(granted(d.act(at: noon) { $0.extend() }))
            #expect(!granted(d.act(at: noon) { $0.extend() }), "one each, no more")
        }
        settle(devices, at: noon)
        #expect(a.summary(at: noon).extensionsToday == 4 && b.summary(at: noon).extensionsToday == 4)
    }

    /// Whole slots are not spread in proportion, which rounds small gaps away: with 0, 2 and 2 left each holder
    /// was one above the mean and would give half a slot, so nothing moved (found by review, with real daemons).
    @Test func slotsSpreadEvenlyWhenProportionalSharesRoundToNothing() {
        let devices = group(3, maxExtensions: 6)
        let (a, b, c) = (devices[0], devices[1], devices[2])
        #expect(devices.map { $0.summary(at: noon).extensionSlotsHere } == [2, 2, 2])
        for _ in 0..<2 { a.act(at: noon) { _ = $0.extend() } }
        settle(devices, at: noon)
        let held = devices.map { $0.summary(at: noon).extensionSlotsHere }
        #expect(held.reduce(0, +) == 4 && held.allSatisfy { $0 >= 1 }, "\(held)")
        // Apart, every device can still take one.
        for d in [a, b, c] { #expect(granted(d.act(at: noon) { $0.extend() })) }
    }

    @Test func aDeviceWithoutASlotGetsOneFromAConnectedPeer() {
        let devices = group(2, maxExtensions: 2)
        let (a, b) = (devices[0], devices[1])
        #expect(a.act(at: noon) { $0.extend() } == .granted(extensionsToday: 1, max: 2, addedMs: 5 * minute))
        settle(devices, at: noon)
        #expect(a.act(at: noon) { $0.extend() } == .noSlotHere(used: 1, max: 2))
        a.act(at: noon) { $0.request(holdMs: 0, slots: 1) }
        settle(devices, at: noon)
        #expect(a.act(at: noon) { $0.extend() } == .granted(extensionsToday: 2, max: 2, addedMs: 5 * minute))
        settle(devices, at: noon)
        #expect(b.act(at: noon) { $0.extend() } == .capReached(used: 2, max: 2))
    }

    /// A request for more slots than the peer holds gets what it holds, no more: the group never has more free
    /// slots than the cap.
    @Test func aRequestForMoreSlotsThanThePeerHoldsGetsOnlyWhatItHolds() {
        let devices = group(2, maxExtensions: 2)
        let (a, b) = (devices[0], devices[1])
        a.act(at: noon) { $0.request(holdMs: 0, slots: 3) }
        sync(a, b, at: noon)
        b.act(at: noon) { $0.answerRequests() }
        sync(a, b, at: noon)
        let book = a.book(at: noon)
        #expect(book.ledger.freeSlots(of: a.account, today: book.today) == 2)
        #expect(book.ledger.freeSlots(of: b.account, today: book.today) == 0)
    }

    /// A request left by a store since moved aside is not answered: what was handed to it could never be spent.
    @Test func aRequestOfAStoreMovedAsideIsNotAnswered() {
        let devices = group(2)
        let (a, b) = (devices[0], devices[1])
        b.act(at: noon) { $0.request(holdMs: 50 * minute) }
        let old = b.account
        sync(a, b, at: noon)
        b.moveStoreAside(newStoreID: "store-2b", group: devices)
        sync(a, b, at: noon)
        b.act(at: noon) { $0.register() }
        sync(a, b, at: noon)
        #expect(a.book(at: noon).ledger.isRetired(old))
        let before = a.book(at: noon).ledger
        a.act(at: noon) { $0.answerRequests() }
        let after = a.book(at: noon).ledger
        #expect(after.dayTransfers[a.account]?[old] == before.dayTransfers[a.account]?[old])
        #expect(after.earnedTransfers[a.account]?[old] == before.earnedTransfers[a.account]?[old])
        #expect(after.heldMs(of: a.account, today: a.book(at: noon).today) == before.heldMs(of: a.account, today: a.book(at: noon).today))
    }

    /// `balance extend`'s attempt: a refusal keeps nothing but the withdrawal of the request for a slot, so an
    /// open request cannot keep this device from answering the others for the rest of the day.
    @Test func aRefusedExtensionWithdrawsTheRequestAndChangesNothingElse() {
        let devices = group(2, maxExtensions: 2)
        let a = devices[0]
        #expect(a.act(at: noon) { $0.extendOrWithdrawRequest() } == .granted(extensionsToday: 1, max: 2, addedMs: 5 * minute))
        settle(devices, at: noon)
        a.act(at: noon) { $0.request(holdMs: 0, slots: 1) }
        #expect(a.book(at: noon).ledger.hasActiveRequest(a.account, today: a.book(at: noon).today))
        // The peer has not answered yet: refused, the request withdrawn, nothing else written.
        #expect(a.act(at: noon) { $0.extendOrWithdrawRequest() } == .noSlotHere(used: 1, max: 2))
        #expect(!a.book(at: noon).ledger.hasActiveRequest(a.account, today: a.book(at: noon).today))
        #expect(a.summary(at: noon).extensionsToday == 1)
        // Asked again and answered: granted.
        a.act(at: noon) { $0.request(holdMs: 0, slots: 1) }
        settle(devices, at: noon)
        #expect(a.act(at: noon) { $0.extendOrWithdrawRequest() } == .granted(extensionsToday: 2, max: 2, addedMs: 5 * minute))
    }

    /// `usage record` on a device that lacked the rights: after asking, what arrived pays the usage, and the
    /// request is withdrawn.
    @Test func usageBeyondWhatADeviceHoldsIsPaidWithTheRightsThatArrive() throws {
        let devices = group(2, base: 60)
        let a = devices[0]
        let held = a.summary(at: noon).heldHereMs
        let monitor = MonitorID(activity: "focus", armedAt: noon - 50 * minute)
        let threshold = try UsageThresholdName(parsing: "used-50")
        let recorded = a.act(at: noon) { $0.recordUsage(monitor: monitor, threshold: threshold, at: noon) }
        #expect(recorded.reason == .genuine && recorded.chargedMs == held && recorded.uncoveredMs == 50 * minute - held)
        let nothingArrived = a.act(at: noon) { $0.payWithArrivedRights(recorded) }
        #expect(nothingArrived.chargedMs == held && nothingArrived.uncoveredMs == 50 * minute - held)
        a.act(at: noon + 1) { $0.request(holdMs: 50 * minute) }
        // Peers answer, and the agent on this device (in `settle`) pays part of the usage while the command waits:
        // the command still reports all it spent.
        settle(devices, at: noon + 1)
        let paid = a.act(at: noon + 2) { $0.payWithArrivedRights(recorded) }
        #expect(paid.uncoveredMs == 0)
        #expect(paid.chargedMs == 50 * minute)
        #expect(a.book(at: noon + 2).ledger.charges[a.account]?[monitor]?.ms == 50 * minute)
        #expect(!a.book(at: noon + 2).ledger.hasActiveRequest(a.account, today: a.book(at: noon + 2).today))
        settle(devices, at: noon + 3)
        #expect(devices[1].summary(at: noon + 3).remainingMs == 10 * minute, "the whole usage spent once, everywhere")
    }

    @Test func aDeviceJoiningDuringAPartitionCannotMintExtraMinutes() {
        let devices = group(2)
        let late = BalanceDevice(3)
        late.paired = [devices[0].id]
        devices[0].paired.insert(late.id)
        // The newcomer syncs with a only; b is away and keeps its share.
        sync(late, devices[0], at: noon)
        late.act(at: noon) { $0.register() }
        settle([devices[0], late], at: noon)
        var spent: Int64 = 0
        for d in devices + [late] { spent += d.act(at: noon + 1) { $0.spend(60 * minute) } }
        #expect(spent == 60 * minute, "a day's allowance is spent once, however the devices are split")
        settle(devices + [late], at: noon + day)
        #expect(late.book(at: noon + day).ledger.slices(of: late.account, on: CivilDate(ordinal: (noon + 2 * day) / day)).count > 0,
                "the newcomer gets quota slices from a later day")
    }

    @Test func twoDevicesThatFoundedApartAgreeOnOneRootOnceTheyMeet() {
        let a = BalanceDevice(1), b = BalanceDevice(2)
        for d in [a, b] { d.setPolicy(BalancePolicy.Key.dailyBase, .double(30), at: noon - day) }
        a.act(at: noon) { $0.register() }
        b.act(at: noon + 1) { $0.register() }
        a.paired = [b.id]
        b.paired = [a.id]
        settle([a, b], at: noon + day)
        #expect(a.book(at: noon + day).ledger.root == a.account)
        #expect(b.book(at: noon + day).ledger.root == a.account)
        let future = noon + 3 * day
        #expect(a.summary(at: future).allowanceMs == 30 * minute, "one allowance, not two")
        #expect(b.summary(at: future).allowanceMs == 30 * minute)
    }

    @Test func timeIsUpWhenTheMinutesEarnedOnAFastClockAreSpentOnASlowerOne() {
        // B's clock runs 4 s ahead of A's (well within the 5 minutes the store allows): B earns 5 minutes,
        // A is handed them and spends them all, by its own clock "before" the earning.
        let devices = group(2, base: 0)
        let (a, b) = (devices[0], devices[1])
        let skew: Int64 = 4_000
        b.act(at: noon + skew) { $0.earn(5 * minute, reason: "push-ups") }
        syncAll(devices, at: noon + 1)
        a.act(at: noon + 1) { $0.request(holdMs: 5 * minute) }
        settle(devices, at: noon + 2)
        #expect(a.summary(at: noon + 2).heldHereMs == 5 * minute)
        #expect(a.act(at: noon + 3) { $0.spend(5 * minute) } == 5 * minute)
        syncAll(devices, at: noon + 4)
        for device in devices {
            let s = device.summary(at: noon + 4)
            #expect(s.remainingMs == 0)
            #expect(s.timeUp, "every device sees the minutes spent after they were earned")
        }
        // Earning again ends the episode everywhere, whichever clock is behind.
        a.act(at: noon + 5) { $0.earn(minute, reason: "more") }
        syncAll(devices, at: noon + 6)
        for device in devices { #expect(!device.summary(at: noon + 6).timeUp) }
    }

    /// A spend interrupted while it waited for peers leaves its request open; once that outlives its lifetime,
    /// the device answers the others again, so they can still spend the whole balance.
    @Test func aRequestLeftOpenByAnInterruptedSpendExpires() {
        let devices = group(2, base: 30)
        let (a, c) = (devices[0], devices[1])
        settle(devices, at: noon)
        c.act(at: noon + 1) { $0.request(holdMs: 40 * minute) }  // and its command is killed: never withdrawn
        settle(devices, at: noon + 2)
        #expect(c.summary(at: noon + 2).heldHereMs == 30 * minute, "a handed c everything it held")
        // Within the lifetime c still waits on its own request; past it, a's request is answered.
        a.act(at: noon + 5_000) { $0.request(holdMs: 20 * minute) }
        settle(devices, at: noon + 5_000)
        #expect(a.summary(at: noon + 5_000).heldHereMs == 0)
        // The daemon is told when to run the agent again, with no change to prompt it: when c's request expires.
        #expect(c.book(at: noon + 5_000).ownRequestExpiryMillis == noon + 1 + 30_001)
        #expect(a.book(at: noon + 5_000).ownRequestExpiryMillis != nil, "a's own request is open too")
        settle(devices, at: noon + 31_000)
        #expect(c.book(at: noon + 31_000).ownRequestExpiryMillis == nil, "withdrawn: no timer")
        #expect(a.summary(at: noon + 31_000).heldHereMs >= 20 * minute, "\(a.summary(at: noon + 31_000))")
        #expect(a.act(at: noon + 31_001) { $0.spend(20 * minute) } == 20 * minute)
    }

    /// Both sides of a partition earn and then spend everything they hold: once healed, nothing is left and
    /// time is up on every device, though no single spend had seen every credit.
    @Test func timeIsUpWhenBothSidesOfAPartitionEarnedAndSpentEverything() {
        let devices = group(2, base: 10)
        let (a, b) = (devices[0], devices[1])
        settle(devices, at: noon)
        a.act(at: noon + 1) { $0.earn(minute, reason: "a") }
        b.act(at: noon + 2) { $0.earn(minute, reason: "b") }
        for (device, at) in [(a, noon + 3), (b, noon + 4)] {
            let held = device.summary(at: at).heldHereMs
            #expect(held > 0 && device.act(at: at) { $0.spend(held) } == held)
        }
        syncAll(devices, at: noon + 5)
        for device in devices {
            let s = device.summary(at: noon + 5)
            #expect(s.remainingMs == 0 && s.spentTodayMs == 12 * minute, "\(s)")
            #expect(s.timeUp, "the balance reached zero through spending")
        }
    }
}
