import Testing
@testable import GroupSyncCore

/// The session's record of the positions a peer sent it (`EchoFilter`): what it answers, and what it keeps.
@Suite struct EchoFilterTests {
    /// Random records (mostly appends, some out of order, some repeated) and forgets, checked after each step
    /// against a plain set of the positions.
    @Test(arguments: 0..<20 as Range<UInt64>) func answersAsASetOfPositionsWould(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var filter = EchoFilter()
        var model = Set<Int64>()
        var next: Int64 = 1, forgotten: Int64 = 0
        for _ in 0..<600 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6:
                // The next fresh sequence, or one skipped (another writer took it).
                next += Int64.random(in: 0...1, using: &random) == 0 ? 1 : Int64.random(in: 2...4, using: &random)
                filter.record(next)
                model.insert(next)
            case 6..<8:
                let any = Int64.random(in: max(1, forgotten + 1)...(next + 3), using: &random)
                filter.record(any)
                model.insert(any)
            default:
                forgotten = Int64.random(in: forgotten...next, using: &random)
                filter.forget(through: forgotten)
                model = model.filter { $0 > forgotten }
            }
            for probe in max(0, forgotten - 2)...(next + 5) {
                #expect(filter.contains(probe) == model.contains(probe), "seed \(seed): contains(\(probe))")
                var end = probe
                while model.contains(end + 1) { end += 1 }
                #expect(filter.runEnd(after: probe) == end, "seed \(seed): runEnd(after: \(probe))")
            }
        }
    }

    /// Found by review: a peer that sends batch after batch and never acknowledges ours keeps the send cursor
    /// where it is, so nothing is forgotten. The filter must not grow with what it sends.
    @Test func consecutivePositionsAreKeptAsOneRun() {
        var filter = EchoFilter()
        for sequence in Int64(1)...200_000 { filter.record(sequence) }
        #expect(filter.runCount == 1)
        #expect(filter.runEnd(after: 0) == 200_000 && filter.contains(200_000) && !filter.contains(200_001))
        filter.record(200_005)
        filter.record(200_003)
        filter.record(200_004)
        filter.record(200_002)
        filter.record(200_001)
        #expect(filter.runCount == 1 && filter.runEnd(after: 100) == 200_005)
        filter.forget(through: 150_000)
        #expect(filter.runCount == 1 && !filter.contains(150_000) && filter.contains(150_001) && filter.runEnd(after: 150_000) == 200_005)
    }
}
