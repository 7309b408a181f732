import Testing
@testable import GroupSyncCore

/// Property tests: the merge is a join, so any order, grouping and repetition of deliveries converges.
@Suite struct LastWriterWinsTests {
    static let devices = (0..<3).map { n in try! DeviceID(bytes: (0..<32).map { UInt8(truncatingIfNeeded: $0 &+ n * 91) }) }

    /// Random writes to a few keys, with deliberately colliding clocks so the origin tie-break is exercised.
    static func randomEntries(_ rng: inout SeededGenerator, count: Int) -> [Entry] {
        (0..<count).map { _ in
            let value: Value? = Int.random(in: 0..<4, using: &rng) == 0 ? nil : .int(Int64.random(in: 0..<5, using: &rng))
            let hlc = HLC(wallMillis: Int64.random(in: 0..<4, using: &rng), logical: UInt32.random(in: 0..<2, using: &rng))
            return Entry(suite: "s", key: "k\(Int.random(in: 0..<3, using: &rng))", value: value,
                         version: Version(hlc: hlc, origin: devices.randomElement(using: &rng)!))
        }
    }

    /// A replica reduced to its essence: apply entries one by one with the merge rule.
    static func replay(_ entries: [Entry]) -> [String: Entry] {
        var state: [String: Entry] = [:]
        for entry in entries where LastWriterWins.wins(entry, over: state[entry.key]) { state[entry.key] = entry }
        return state
    }

    @Test(arguments: 0..<200) func anyDeliveryOrderConverges(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        let writes = Self.randomEntries(&rng, count: 12)
        let reference = Self.replay(writes)
        for _ in 0..<5 {
            // Shuffled, with duplicates: idempotence and commutativity together.
            var delivered = writes.shuffled(using: &rng)
            delivered += delivered.prefix(Int.random(in: 0...writes.count, using: &rng))
            delivered.shuffle(using: &rng)
            #expect(Self.replay(delivered) == reference, "seed \(seed)")
        }
        // The winner of each key is the greatest (hlc, origin) among its writes.
        for (key, winner) in reference {
            let maximum = writes.filter { $0.key == key }.map(\.version).max()!
            #expect(winner.version == maximum)
        }
    }

    @Test(arguments: 0..<100) func mergeIsCommutativeAssociativeIdempotent(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        let three = Self.randomEntries(&rng, count: 30).filter { $0.key == "k0" }.prefix(3)
        guard three.count == 3 else { return }
        let (a, b, c) = (three[three.startIndex], three[three.startIndex + 1], three[three.startIndex + 2])
        let merge = LastWriterWins.merge
        #expect(merge(a, b) == merge(b, a))
        #expect(merge(merge(a, b), c) == merge(a, merge(b, c)))
        #expect(merge(a, a) == a)
    }

    /// A peer's entry that no store may keep (an empty key, a number that is not finite) is reported as
    /// unstorable and not stored; the entries beside it are.
    @Test func anEntryNoStoreMayKeepIsReportedAndNotStored() {
        let store = MemoryReplicaStore(device: Self.devices[0], storeID: "store-0")
        let version = Version(hlc: HLC(wallMillis: 1, logical: 0), origin: Self.devices[1])
        let entries = [Entry(suite: "s", key: "", value: .int(1), version: version),
                       Entry(suite: "s", key: "nan", value: .double(.nan), version: version),
                       Entry(suite: "s", key: "fine", value: .int(2), version: version)]
        let result = store.apply(entries, physicalMillis: 1)
        #expect(result.unstorable.map(\.entry.key) == ["", "nan"])
        #expect(result.applied.map(\.entry.key) == ["fine"])
        #expect(store.entry(suite: "s", key: "") == nil && store.entry(suite: "s", key: "nan") == nil)
        #expect(store.entry(suite: "s", key: "fine")?.value == .int(2))
    }

    @Test func equalVersionsStillPickOneWinnerDeterministically() {
        let version = Version(hlc: HLC(wallMillis: 5), origin: Self.devices[0])
        let x = Entry(suite: "s", key: "k", value: .string("x"), version: version)
        let y = Entry(suite: "s", key: "k", value: .string("y"), version: version)
        let tomb = Entry(suite: "s", key: "k", value: nil, version: version)
        #expect(LastWriterWins.merge(x, y) == LastWriterWins.merge(y, x))
        #expect(LastWriterWins.merge(x, tomb) == x)
    }

    @Test func laterDeleteBeatsEarlierWriteAndOldWriteCannotResurrect() {
        let write = Entry(suite: "s", key: "k", value: .int(1), version: Version(hlc: HLC(wallMillis: 1), origin: Self.devices[0]))
        let delete = Entry(suite: "s", key: "k", value: nil, version: Version(hlc: HLC(wallMillis: 2), origin: Self.devices[1]))
        #expect(LastWriterWins.merge(write, delete).isDeleted)
        #expect(!LastWriterWins.wins(write, over: delete))
    }
}
