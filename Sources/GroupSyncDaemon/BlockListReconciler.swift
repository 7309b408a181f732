import GroupSyncCore
import GroupSyncStore

/// Keeps each suite's `blockedSelectionIds` in line with its per-selection block keys when they change on
/// this machine, a peer's among them (`SelectionBlocks`): the list is one value and merges last-writer-wins,
/// so after two devices blocked different selections while apart, the list that won names only one device's
/// blocks until it is derived again. Every device derives the same list from the same keys, so the lists
/// the devices write agree, and a list already right is not written again: the writes end there.
enum BlockListReconciler {
    static func changed(suites: Set<String>, store: Store, signal: ChangeSignal, log: DaemonLog) {
        for suite in suites.sorted() {
            do {
                let list = try store.update(suite: suite) { entries throws(StoreError) -> (changes: [String: SuiteChange], result: Value?) in
                    let list = SelectionBlocks.reconciledList(of: entries.liveValuesByKey)
                    return (list.map { [AppGroupState.blockedSelectionIDs: .set($0)] } ?? [:], list)
                }
                guard case .array(let ids)? = list else { continue }
                signal.post()
                log.write("event=blocks-reconciled suite=\(JSONWriter.string(for: .string(suite))) blocked=\(ids.count)")
            } catch {
                log.write("event=blocks-reconcile-failed suite=\(JSONWriter.string(for: .string(suite))) error=\(JSONWriter.string(for: .string("\(error)")))")
            }
        }
    }
}
