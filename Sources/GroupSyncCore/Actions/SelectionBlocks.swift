/// Which selections are blocked, kept so that blocks made on two devices cut off from each other both
/// survive when they meet again.
///
/// `blockedSelectionIds` is one value, and one value merges last-writer-wins: a device that blocked A and
/// another that blocked B while apart would end with only one of the two lists. So each selection also gets
/// a key of its own, `groupsync.block.{id}`, holding `true` (blocked) or `false` (unblocked), and those merge
/// one by one: the later action on a selection wins, actions on different selections all stay. The list is
/// what apps read; it is derived from the keys, written with them by the action runner, and written again by
/// a device's daemon when a peer's keys arrive (`reconciliation`).
///
/// A selection listed in `blockedSelectionIds` without a key of its own (listed by an app, or by a GroupSync
/// from before the keys) counts as blocked: the list speaks for the selections the keys do not cover.
public enum SelectionBlocks {
    public static let keyPrefix = "groupsync.block."

    public static func key(_ selectionID: String) -> String { keyPrefix + selectionID }

    /// The selections `values` (one suite's) say are blocked.
    public static func blocked(in values: [String: Value]) -> Set<String> {
        var blocked = Set(listed(in: values).filter { values[key($0)] == nil })
        for (name, value) in values where value == .bool(true) {
            if let id = selectionID(ofKey: name) { blocked.insert(id) }
        }
        return blocked
    }

    /// The selection a block key names; nil for any other key. Compared as bytes, as the store compares
    /// keys: as characters, "groupsync.block." followed by a combining mark would not start with the prefix.
    public static func selectionID(ofKey name: String) -> String? { EntryName.remainder(of: name, after: keyPrefix) }

    /// The list value apps read, for `ids`.
    public static func list(_ ids: Set<String>) -> Value {
        .array(ids.sorted().map(Value.string))
    }

    /// The writes that bring a suite's `blockedSelectionIds`, and the list in its `lastBlockUpdate`, in line
    /// with its keys, when the stored ones say otherwise (a peer's block arrived and the last-written list is
    /// another device's, or a device that was catching up wrote what it had so far); empty when they are
    /// right, or when the suite has no per-selection key at all (its list is an app's own and left alone).
    public static func reconciliation(of values: [String: Value]) -> [String: Value] {
        guard values.keys.contains(where: { selectionID(ofKey: $0) != nil }) else { return [:] }
        let wanted = list(blocked(in: values))
        var writes: [String: Value] = [:]
        if values[AppGroupState.blockedSelectionIDs] != wanted { writes[AppGroupState.blockedSelectionIDs] = wanted }
        if case .dictionary(var update)? = values[AppGroupState.lastBlockUpdate], update[AppGroupState.blockedSelectionIDs] != wanted {
            update[AppGroupState.blockedSelectionIDs] = wanted
            writes[AppGroupState.lastBlockUpdate] = .dictionary(update)
        }
        return writes
    }

    /// Why `id` cannot have a key of its own (a control character, or too long to name a key); nil when it can.
    public static func problem(withSelectionID id: String) -> String? {
        EntryName.problem(key(id), what: "key").map { "selection '\(id)' cannot be kept as a block: \($0.replacing("the key name", with: "its key"))" }
    }

    private static func listed(in values: [String: Value]) -> [String] {
        guard case .array(let items)? = values[AppGroupState.blockedSelectionIDs] else { return [] }
        return items.compactMap { if case .string(let id) = $0 { id } else { nil } }
    }
}
