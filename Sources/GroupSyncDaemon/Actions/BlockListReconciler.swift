import GroupSyncCore
import GroupSyncStore

/// Keeps each suite's `blockedSelectionIds` in line with its per-selection block keys (`SelectionBlocks`):
/// when the keys change on this machine, a peer's among them; when the list changes (a device that was
/// catching up wrote the part it had, or stopped before the rest arrived); and once when the daemon starts;
/// each time once the changes pause (`BlockListSchedule`).
/// The list is one value and merges last-writer-wins, so after two devices blocked different selections
/// while apart, the list that won names only one device's blocks until it is derived again. Every device
/// derives the same list from the same keys, so the lists the devices write agree, and a list already right
/// is not written again: the writes end there.
enum BlockListReconciler {
    static func reconcile(suites: Set<String>, store: Store, signal: ChangeSignal, log: DaemonLog) {
        for suite in suites.sorted() {
            do {
                // The block keys and the two lists only: the suite may hold anything else, and a catch-up into
                // it would otherwise read all of it after every batch.
                let writes = try store.update(suite: suite, keys: [AppGroupState.blockedSelectionIDs, AppGroupState.lastBlockUpdate],
                                              keyPrefix: SelectionBlocks.keyPrefix, writing: { entries throws(StoreError) -> (writes: [String: Value], result: [String: Value]) in
                    let writes = SelectionBlocks.reconciliation(of: entries.liveValuesByKey)
                    return (writes, writes)
                })
                guard !writes.isEmpty else { continue }
                signal.post()
                let blocked = if case .array(let ids)? = writes[AppGroupState.blockedSelectionIDs] { "\(ids.count)" } else { "unchanged" }
                log.write("event=blocks-reconciled suite=\(JSONWriter.string(for: .string(suite))) blocked=\(blocked)")
            } catch {
                log.write("event=blocks-reconcile-failed suite=\(JSONWriter.string(for: .string(suite))) error=\(JSONWriter.string(for: .string("\(error)")))")
            }
        }
    }
}
