/// The positions of our history that hold entries this peer sent us during this session.
///
/// Sending those back would be an echo: the peer took them from its current store, and a store only moves
/// forward per key (last writer wins, tombstones kept), so it still holds each of them or something newer.
/// The proof needs the entry to have come *from this peer, in this session*. The simpler rule "skip every
/// entry whose origin is the peer" is not safe: if the peer's store was recreated, an entry it wrote into
/// its old store can reach us later through a third device, and skipping it would leave the peer (say, a
/// phone that only talks to one laptop) without it forever.
///
/// Positions are kept sorted and dropped once the send cursor passes them, so the filter holds at most
/// what the peer sent us beyond the point we are sending from.
struct EchoFilter: Sendable {
    private var sequences: [Int64] = []

    mutating func record(_ sequence: Int64) {
        // Applied entries get fresh, increasing sequences, so this is nearly always an append.
        if let last = sequences.last, sequence <= last {
            let index = insertionIndex(sequence)
            if index == sequences.count || sequences[index] != sequence { sequences.insert(sequence, at: index) }
        } else {
            sequences.append(sequence)
        }
    }

    func contains(_ sequence: Int64) -> Bool {
        let index = insertionIndex(sequence)
        return index < sequences.count && sequences[index] == sequence
    }

    /// The end of the run of recorded positions right after `sequence` (`sequence` itself when the next
    /// position is not recorded). Every position in the run is an echo whatever it holds now — the entry the
    /// peer sent, or nothing, if a later write moved the key on — so a sender can skip the run unread.
    func runEnd(after sequence: Int64) -> Int64 {
        var index = insertionIndex(sequence + 1)
        var end = sequence
        while index < sequences.count, sequences[index] == end + 1 {
            end += 1
            index += 1
        }
        return end
    }

    /// Drops positions up to `sequence`: the send cursor has passed them.
    mutating func forget(through sequence: Int64) {
        sequences.removeFirst(insertionIndex(sequence + 1))
    }

    /// The first index whose sequence is not below `sequence`.
    private func insertionIndex(_ sequence: Int64) -> Int {
        var low = 0, high = sequences.count
        while low < high {
            let mid = (low + high) / 2
            if sequences[mid] < sequence { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
