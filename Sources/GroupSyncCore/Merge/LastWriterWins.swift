/// The merge rule for entries of the same key: last writer wins on `(hlc, origin)`.
///
/// It is a join (the larger of two elements under a total order), hence commutative, associative and
/// idempotent, so replicas that saw the same writes in any order, any number of times, agree.
public enum LastWriterWins {
    /// The entry that survives. Equal versions with different contents can only come from a corrupt or
    /// lying peer; the encoded bytes then decide, so the rule stays a total order and still converges.
    public static func merge(_ a: Entry, _ b: Entry) -> Entry {
        precondition(a.suite == b.suite && a.key == b.key, "merging different keys")
        return wins(b, over: a) ? b : a
    }

    /// Whether `candidate` replaces `current`.
    public static func wins(_ candidate: Entry, over current: Entry?) -> Bool {
        guard let current else { return true }
        if candidate.version != current.version { return candidate.version > current.version }
        return contentKey(candidate).lexicographicallyPrecedes(contentKey(current)) == false
            && contentKey(candidate) != contentKey(current)
    }

    private static func contentKey(_ entry: Entry) -> [UInt8] {
        guard let value = entry.value else { return [] }  // a tombstone sorts first: a live value beats it
        return [1] + ValueCodec.encode(value)
    }
}
