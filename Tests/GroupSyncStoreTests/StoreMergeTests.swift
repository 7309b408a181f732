import Testing
import GroupSyncCore
@testable import GroupSyncStore

/// The SQLite store decides last-writer-wins in SQL (`Store.insertIfWins`); the pure core's `LastWriterWins`
/// is the reference. These tests hold the two to the same answer on random pairs, on every kind of tie the
/// order has (same version and value, same version with another value, a tombstone against a live value,
/// values that are prefixes of each other), and on whole histories replayed in random batches.
@Suite struct StoreMergeTests {
    /// Origins that differ in their first byte on both sides of 0x80 (a signed comparison would misorder
    /// them) and in their last byte only.
    static let origins: [DeviceID] = [
        [UInt8](repeating: 0x01, count: 32),
        [UInt8](repeating: 0x7F, count: 32),
        [UInt8](repeating: 0x80, count: 32),
        [UInt8](repeating: 0xFF, count: 32),
        [UInt8](repeating: 0x80, count: 31) + [0x00],
        [UInt8](repeating: 0x80, count: 31) + [0xFF],
    ].map { try! DeviceID(bytes: $0) }

    /// Few distinct values, so equal versions often meet equal or different values; strings and data that
    /// are prefixes of one another, bytes ≥ 0x80, and ±0 (equal as numbers, different as bits).
    static let values: [Value?] = [
        nil, .int(0), .int(1), .int(-1), .int(.max), .string(""), .string("a"), .string("ab"), .string("b"),
        .string("é"), .data([]), .data([0xFF]), .data([0xFF, 0x00]), .double(0.0), .double(-0.0), .bool(false),
        .bool(true), .date(1.5), .array([.int(1)]), .dictionary(["a": .int(1), "b": .string("x")]),
    ]

    static let walls: [Int64] = [-7, 0, 1, 2, 1 << 40]
    static let logicals: [UInt32] = [0, 1, .max]

    static func randomEntry(key: String, _ rng: inout SeededGenerator) -> Entry {
        let hlc = HLC(wallMillis: walls.randomElement(using: &rng)!, logical: logicals.randomElement(using: &rng)!)
        return Entry(suite: "s", key: key, value: values.randomElement(using: &rng)!,
                     version: Version(hlc: hlc, origin: origins.randomElement(using: &rng)!))
    }

    /// Far ahead of every wall time above, so the drift bound refuses nothing.
    static let now: Int64 = 1 << 50

    @Test(arguments: 0..<10) func theSQLDecisionEqualsTheCoreOnRandomPairs(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path + "/store.db", device: try DeviceID(bytes: Array(repeating: 9, count: 32)))
        let count = 400
        let keys = (0..<count).map { "k\($0)" }
        let stored = keys.map { Self.randomEntry(key: $0, &rng) }
        // Half the candidates are copies of the stored entry with at most one field changed: ties are the
        // cases a hand-written comparison gets wrong, and random versions rarely tie.
        let candidates = stored.map { entry -> Entry in
            var candidate = Self.randomEntry(key: entry.key, &rng)
            switch Int.random(in: 0..<6, using: &rng) {
            case 0: candidate = entry
            case 1: candidate.version = entry.version
            case 2: candidate.version.hlc = entry.version.hlc
            case 3: candidate.version.hlc.wallMillis = entry.version.hlc.wallMillis
            default: break
            }
            return candidate
        }
        #expect(try store.apply(stored, physicalMillis: Self.now).applied.count == count)

        let result = try store.apply(candidates, physicalMillis: Self.now)
        let appliedKeys = Set(result.applied.map(\.entry.key))
        var expectedApplied = 0
        for (old, candidate) in zip(stored, candidates) {
            let wins = LastWriterWins.wins(candidate, over: old)
            #expect(appliedKeys.contains(candidate.key) == wins, "\(old) then \(candidate)")
            #expect(try store.entry(suite: "s", key: candidate.key) == LastWriterWins.merge(old, candidate), "\(old) then \(candidate)")
            if wins { expectedApplied += 1 }
        }
        #expect(result.applied.count == expectedApplied)
        #expect(result.superseded == count - expectedApplied)
        // The applied entries got consecutive sequences after the first batch, in the order they came.
        #expect(result.applied.map(\.sequence) == (0..<expectedApplied).map { Int64(count + 1 + $0) })
        #expect(result.applied.map(\.entry) == zip(stored, candidates).filter { LastWriterWins.wins($1, over: $0) }.map(\.1))
        #expect(try store.lastSequence() == Int64(count + expectedApplied))
    }

    @Test(arguments: 0..<10) func randomHistoriesInRandomBatchesEndWhereTheCoreEnds(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path + "/store.db", device: try DeviceID(bytes: Array(repeating: 9, count: 32)))
        var reference: [String: Entry] = [:]
        var sequence: Int64 = 0
        for _ in 0..<30 {
            // Few keys, so one batch often holds several writes to the same key, decided one after another.
            let batch = (0..<Int.random(in: 0...20, using: &rng)).map { _ in
                Self.randomEntry(key: "k\(Int.random(in: 0..<4, using: &rng))", &rng)
            }
            var expected: [Change] = []
            for entry in batch where LastWriterWins.wins(entry, over: reference[entry.key]) {
                reference[entry.key] = entry
                sequence += 1
                expected.append(Change(sequence: sequence, entry: entry))
            }
            let result = try store.apply(batch, physicalMillis: Self.now)
            #expect(result.applied == expected)
            #expect(result.superseded == batch.count - expected.count)
        }
        for (key, entry) in reference { #expect(try store.entry(suite: "s", key: key) == entry) }
        #expect(try store.lastSequence() == sequence)
        // The history holds each key once, at the sequence of its last applied write.
        #expect(try store.changes(after: 0, limit: 1000).count == reference.count)
        #expect(try store.integrityCheck() == ["ok"])
    }

    @Test func anEmptyOrFullySupersededBatchCommitsNothing() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path + "/store.db", device: try DeviceID(bytes: Array(repeating: 9, count: 32)))
        var commits = 0
        store.didCommit = { commits += 1 }
        let entry = Entry(suite: "s", key: "k", value: .int(1), version: Version(hlc: HLC(wallMillis: 5), origin: Self.origins[0]))
        #expect(try store.apply([], physicalMillis: Self.now).applied.isEmpty)
        #expect(try store.apply([entry], physicalMillis: Self.now).applied.count == 1)
        let clock = try store.currentClock()
        let again = try store.apply([entry, entry], physicalMillis: Self.now)
        #expect(again.applied.isEmpty && again.superseded == 2)
        #expect(commits == 1)
        #expect(try store.lastSequence() == 1)
        #expect(try store.currentClock() == clock)
    }

    /// A peer's earlier firing time, written later, does not replace a later one here either (`LatestFiring`):
    /// the SQLite store writes the later time back as its own write, as the in-memory store does, and
    /// watchers and sessions read it as the newest change.
    @Test func aLaterFiringIsWrittenBackAsTheMemoryStoreDoes() throws {
        let folder = TemporaryFolder()
        let me = try DeviceID(bytes: Array(repeating: 9, count: 32))
        let store = try Store(path: folder.path + "/store.db", device: me)
        let reference = MemoryReplicaStore(device: me, storeID: store.storeID)
        let key = "events_focus_intervalDidStart", t0: Int64 = 1_700_000_000_000
        _ = try store.apply([Entry(suite: "s", key: key, value: .double(Double(t0)), version: Version(hlc: HLC(wallMillis: t0, logical: 0), origin: me))], physicalMillis: t0)
        _ = reference.apply([Entry(suite: "s", key: key, value: .double(Double(t0)), version: Version(hlc: HLC(wallMillis: t0, logical: 0), origin: me))], physicalMillis: t0)
        let late = Entry(suite: "s", key: key, value: .double(Double(t0 - 600_000)), version: Version(hlc: HLC(wallMillis: t0 + 60_000, logical: 0), origin: Self.origins[0]))
        let result = try store.apply([late], physicalMillis: t0 + 120_000)
        let expected = reference.apply([late], physicalMillis: t0 + 120_000)
        #expect(result.kept.map(\.entry) == expected.kept.map(\.entry) && result.kept.count == 1)
        let stored = try store.entry(suite: "s", key: key)
        #expect(stored == reference.entry(suite: "s", key: key) && stored?.value == .double(Double(t0)) && stored?.version.origin == me)
        #expect(try store.changes(after: 0, limit: 10).last?.entry == stored && store.lastSequence() == result.kept.first?.sequence)
        #expect(!store.lastWriteWasSyncedBeforeVisible)

        // A write-back on a version ahead of the clock (a faster peer's entry moved it) is synced before it is
        // visible, as a local write ahead of the clock is; the result is the same.
        let ahead = Entry(suite: "s", key: key, value: .double(1), version: Version(hlc: HLC(wallMillis: t0 + 200_000, logical: 0), origin: Self.origins[1]))
        let aheadResult = try store.apply([ahead], physicalMillis: t0 + 130_000)
        let aheadExpected = reference.apply([ahead], physicalMillis: t0 + 130_000)
        #expect(aheadResult.kept.count == 1 && aheadResult.kept.map(\.entry) == aheadExpected.kept.map(\.entry))
        #expect(store.lastWriteWasSyncedBeforeVisible)
        #expect(try store.entry(suite: "s", key: key) == reference.entry(suite: "s", key: key) && store.entry(suite: "s", key: key)?.value == .double(Double(t0)))
    }
}
