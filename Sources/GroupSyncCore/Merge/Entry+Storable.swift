extension Entry {
    /// Why no store may keep this entry under the current rules (a name they refuse, a number that is not
    /// finite, a date that cannot be printed), or nil when it can be kept.
    ///
    /// A local write is refused at the door for the same reasons (`Store.validate`). A peer's entry can still
    /// break them: an earlier groupsync, whose rules were looser, wrote it, and the peer's store holds it as
    /// it was. The merge leaves such an entry out rather than refusing its whole batch, which the sender
    /// would offer again for ever and which would hold back everything written after it.
    public var storageProblem: String? {
        if let problem = EntryName.problem(suite, what: "suite") ?? EntryName.problem(key, what: "key") { return problem }
        if let value, !value.isStorable { return "it holds a number that is not finite or a date outside years 0000-9999" }
        return nil
    }
}
