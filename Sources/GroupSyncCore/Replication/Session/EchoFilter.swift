/// The positions of our history that hold entries this peer sent us during this session.
///
/// Sending those back would be an echo: the peer took them from its current store, and a store only moves
/// forward per key (last writer wins, tombstones kept), so it still holds each of them or something newer.
/// The proof needs the entry to have come *from this peer, in this session*. The simpler rule "skip every
/// entry whose origin is the peer" is not safe: if the peer's store was recreated, an entry it wrote into
/// its old store can reach us later through a third device, and skipping it would leave the peer (say, a
/// phone that only talks to one laptop) without it forever.
///
/// Positions are kept as sorted runs of consecutive sequences and dropped once the send cursor passes them.
/// Applied entries take consecutive fresh sequences, so a session's echoes are a few runs however many
/// entries the peer sends: kept one by one (8 bytes each), a peer that sent batch after batch and never
/// acknowledged ours, so that the send cursor never moved, grew this without end, and each look at the run
/// after the cursor walked all of it (found by review: 500 MB from 1.2 MB on the wire).
struct EchoFilter: Sendable {
    /// Disjoint, sorted, and never adjacent (touching runs are merged).
    private var runs: [ClosedRange<Int64>] = []

    /// How many runs are kept: what the filter's memory grows with.
    var runCount: Int { runs.count }

    mutating func record(_ sequence: Int64) {
        // Nearly always the next sequence after the last run.
        if let last = runs.last {
            if last.contains(sequence) { return }
            if sequence > last.upperBound {
                if sequence == last.upperBound + 1 { runs[runs.count - 1] = last.lowerBound...sequence } else { runs.append(sequence...sequence) }
                return
            }
        }
        let index = firstRun(endingAtOrAfter: sequence)
        if index < runs.count && runs[index].contains(sequence) { return }
        let joinsNext = index < runs.count && runs[index].lowerBound == sequence + 1
        let joinsPrevious = index > 0 && runs[index - 1].upperBound == sequence - 1
        switch (joinsPrevious, joinsNext) {
        case (true, true):
            runs[index - 1] = runs[index - 1].lowerBound...runs[index].upperBound
            runs.remove(at: index)
        case (true, false): runs[index - 1] = runs[index - 1].lowerBound...sequence
        case (false, true): runs[index] = sequence...runs[index].upperBound
        case (false, false): runs.insert(sequence...sequence, at: index)
        }
    }

    func contains(_ sequence: Int64) -> Bool {
        let index = firstRun(endingAtOrAfter: sequence)
        return index < runs.count && runs[index].contains(sequence)
    }

    /// The end of the run of recorded positions right after `sequence` (`sequence` itself when the next
    /// position is not recorded). Every position in the run is an echo whatever it holds now — the entry the
    /// peer sent, or nothing, if a later write moved the key on — so a sender can skip the run unread.
    func runEnd(after sequence: Int64) -> Int64 {
        guard sequence < .max else { return sequence }
        let index = firstRun(endingAtOrAfter: sequence + 1)
        guard index < runs.count, runs[index].contains(sequence + 1) else { return sequence }
        return runs[index].upperBound
    }

    /// Drops positions up to `sequence`: the send cursor has passed them.
    mutating func forget(through sequence: Int64) {
        guard sequence < .max else { runs.removeAll(); return }
        let index = firstRun(endingAtOrAfter: sequence + 1)
        runs.removeFirst(index)
        if let first = runs.first, first.lowerBound <= sequence { runs[0] = (sequence + 1)...first.upperBound }
    }

    /// The index of the first run that ends at or after `sequence` (`runs.count` when none does).
    private func firstRun(endingAtOrAfter sequence: Int64) -> Int {
        var low = 0, high = runs.count
        while low < high {
            let mid = (low + high) / 2
            if runs[mid].upperBound < sequence { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
