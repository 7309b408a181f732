import Testing
@testable import GroupSyncCore

/// A paired peer's balance records are network input: whatever numbers they hold, every balance
/// operation on every device must go on working, with amounts no larger than a record may mean.
@Suite struct BalanceHostileRecordTests {
    static let huge = Int64.max
    static let hugeNegative = Int64.min

    /// Records a misbehaving peer could write under its own accounts, each set tried on its own.
    static func hostileRecords(peer: BalanceAccount, victim: BalanceAccount, today: CivilDate) -> [[String: Value]] {
        let (big, small) = (Value.int(huge), Value.int(hugeNegative))
        let other = BalanceAccount(device: peer.device, epoch: "second-store")
        func fired(armedAt: Int64, usedMs: Value, at: Value) -> (String, Value) {
            let event = FiredThreshold(monitor: MonitorID(activity: "focus", armedAt: armedAt), event: "used-1", usedMs: 0, at: 0)
            return (event.key, .dictionary(["activity": .string("focus"), "armedAt": .int(armedAt), "event": .string("used-1"),
                                            "usedMs": usedMs, "at": at]))
        }
        return [
            ["earned.\(peer)": .dictionary(["ms": big, "count": big, "lastAt": big, "lastReason": .string("x")])],
            // Two epochs of one device: each alone fits, their sum does not.
            ["earned.\(peer)": .dictionary(["ms": big, "count": .int(1), "lastAt": .int(1), "lastReason": .string("x")]),
             "earned.\(other)": .dictionary(["ms": big, "count": .int(1), "lastAt": .int(1), "lastReason": .string("x")])],
            ["earned.\(peer)": .dictionary(["ms": .double(8.9e15), "count": .int(1), "lastAt": .int(1), "lastReason": .string("x")])],
            ["day.\(peer).\(today)": .dictionary(["allowanceMs": big, "slots": big, "extensions": big, "extensionMs": big,
                                                  "spentMs": big, "lastSpendAt": big, "lastExtendAt": big])],
            ["give.\(peer).\(victim).\(today)": .dictionary(["ms": big, "slots": big]),
             "give.\(peer).\(victim).earned": .dictionary(["ms": big])],
            ["want.\(peer)": .dictionary(["day": .string(today.description), "holdMs": big, "slots": big, "spentBase": .int(0),
                                          "extensionsBase": .int(0), "at": big])],
            ["charge.\(peer).\(noon - 60 * minute).focus": .dictionary(["activity": .string("focus"), "armedAt": .int(noon - 60 * minute),
                                                                         "day": .string(today.description), "ms": big, "at": big])],
            ["charge.\(peer).\(hugeNegative).focus": .dictionary(["activity": .string("focus"), "armedAt": small,
                                                                   "day": .string(today.description), "ms": .int(1), "at": small])],
            ["charge.\(peer).\(huge).focus": .dictionary(["activity": .string("focus"), "armedAt": big,
                                                           "day": .string(today.description), "ms": big, "at": big])],
            Dictionary(uniqueKeysWithValues: [fired(armedAt: huge, usedMs: .int(60_000), at: big),
                                              fired(armedAt: hugeNegative, usedMs: .int(60_000), at: small),
                                              fired(armedAt: noon - 60 * minute, usedMs: big, at: small)]),
            ["member.\(peer)": .dictionary(["joinedAt": small, "founder": .bool(true)]),
             "quota.\(peer)": .array([.dictionary(["to": .string(victim.description), "root": .string(peer.description),
                                                   "start": small, "end": big, "fromDay": .string(today.description)])])],
        ]
    }

    @Test func hugeNumbersInAPeersRecordsNeitherTrapNorInflateTheBalance() throws {
        let today = LocalCalendar.utc.day(atUTCMillis: noon)
        let count = Self.hostileRecords(peer: BalanceDevice(2).account, victim: BalanceDevice(1).account, today: today).count
        for index in 0..<count {
            let devices = pairedDevices(2)
            let (victim, peer) = (devices[0], devices[1])
            victim.setPolicy(BalancePolicy.Key.dailyBase, .double(30), at: noon - day)
            victim.act(at: noon - day) { $0.earn(60 * minute, reason: "push-ups") }
            settle(devices, at: noon - 1000)
            for (key, value) in Self.hostileRecords(peer: peer.account, victim: victim.account, today: today)[index] {
                peer.store.set(value, suite: BalanceSuite.name, key: key, physicalMillis: noon)
            }
            sync(victim, peer, at: noon)

            // Everything the CLI and the daemon do on the victim's side.
            let summary = victim.summary(at: noon)
            #expect(summary.remainingMs >= 0, "set \(index)")
            #expect(summary.remainingMs <= 100 * BalanceAmount.maxRecordMs, "set \(index): \(summary.remainingMs)")
            #expect(summary.earnedMs <= 100 * BalanceAmount.maxRecordMs, "set \(index)")
            victim.act(at: noon + 1) { $0.rebalance(connected: [peer.id]) }
            let spent = victim.act(at: noon + 2) { $0.spend(10 * minute) }
            // A request for more than the balance is answered with everything the victim holds, as a
            // request for exactly that would be (the peer may spend the whole balance while connected).
            let asksForEverything = index == 5
            #expect(spent == (asksForEverything ? 0 : 10 * minute), "set \(index): the victim's own minutes still spend")
            victim.act(at: noon + 3) { $0.earn(5 * minute, reason: "more") }
            _ = victim.act(at: noon + 4) { $0.extend() }
            let monitor = MonitorID(activity: "focus", armedAt: noon - 60 * minute)
            let outcome = victim.act(at: noon + 5) { $0.recordUsage(monitor: monitor, threshold: try! UsageThresholdName(parsing: "used-2"), at: noon + 5) }
            #expect(outcome.chargedMs >= 0 && outcome.chargedMs <= 2 * minute, "set \(index)")
            victim.act(at: noon + 6) { $0.settleUsage() }
            settle(devices, at: noon + 7)
            let after = victim.summary(at: noon + 8)
            #expect(after.remainingMs >= 0 && after.remainingMs <= 100 * BalanceAmount.maxRecordMs, "set \(index)")
            #expect(after.spentTodayMs >= (asksForEverything ? 0 : 10 * minute), "set \(index)")
        }
    }

    @Test func sumsOfRecordAmountsStickAtTheEndsInsteadOfTrapping() {
        #expect(Int64.max.saturatingAdding(1) == .max)
        #expect(Int64.min.saturatingAdding(-1) == .min)
        #expect(Int64.min.saturatingSubtracting(1) == .min)
        #expect(Int64.max.saturatingSubtracting(-1) == .max)
        #expect([Int64.max, Int64.max].saturatingSum { $0 } == .max)
        #expect([Int64.min, -1].saturatingSum { $0 } == .min)
        #expect([Int64(3), 4].saturatingSum { $0 } == 7)
        // The proportional share of a rebalancing step, exact in between however large its factors.
        #expect(Int64.max.scaled(by: Int64.max - 1, dividedBy: Int64.max) == Int64.max - 1)
        #expect(Int64(10).scaled(by: 3, dividedBy: 4) == 7)
        // A quotient just past Int64 sticks at the end its sign points to, where dividing it out would trap.
        #expect(Int64(1 << 62).scaled(by: 4, dividedBy: 1) == .max)
        #expect(Int64(1 << 62).scaled(by: -4, dividedBy: 1) == .min)
    }

    /// Holders cover a debt in proportion to what they hold, each part rounded up so that the parts add up to
    /// at least the debt, even a debt smaller than the number of holders (rounded down, each part was 0 and
    /// such a debt was never covered).
    @Test func proportionalPartsRoundUpSoTheyCoverTheDebt() {
        #expect(BalanceBook.share(of: 10, mine: 100, all: 300) == 4)
        #expect(BalanceBook.share(of: 2, mine: 100, all: 300) == 1)
        #expect(3 * BalanceBook.share(of: 2, mine: 100, all: 300) >= 2)
        #expect(BalanceBook.share(of: 10, mine: 3, all: 300) == 1, "never more than the holder holds")
        #expect(BalanceBook.share(of: 500, mine: 100, all: 300) == 100, "a debt above all holdings takes what each holds")
    }

    /// Earning a negative amount (through the library; the command line refuses it) earns nothing rather than
    /// taking minutes away.
    @Test func aNegativeEarningEarnsNothing() {
        let device = BalanceDevice(1)
        // In the operation itself, before its record is stored and read back (reading clamps it too).
        let inBook = device.act(at: noon) { book in
            book.earn(-minute, reason: "")
            return book.ledger.earnedRightsMs(of: book.me)
        }
        #expect(inBook == 0)
        #expect(device.book(at: noon).ledger.earnedRightsMs(of: device.account) == 0)
        device.act(at: noon) { $0.earn(2 * minute, reason: "") }
        #expect(device.book(at: noon).ledger.earnedRightsMs(of: device.account) == 2 * minute)
    }
}
