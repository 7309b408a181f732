import GroupSyncCore
import GroupSyncStore

/// `groupsync watch SUITE [--json]`: one JSON line per change, from any process or peer, as it commits.
enum WatchCommand: Command {
    static let name = "watch"
    static let summary = "stream the changes of a suite as JSON lines"
    static let help = """
        usage: groupsync watch [--json] SUITE

        Prints one JSON line for each change to SUITE from now on, made by this or any other process on
        the machine or arriving from a paired device: the fields of 'get --json' plus "deleted". Waits on
        inotify, so it uses no CPU while nothing changes. Stops when its output is closed or on Ctrl-C.
        The store keeps the latest version of each key, as replication sends it: writes to one key that
        follow each other faster than watch reads (a few ms) are printed once, with the latest value.
        (--json is accepted for symmetry; the output is always JSON.)

        \(homeHelp)
        """
    static let flags = FlagSpec.with(switches: ["--json"])
    /// Changes read from the store at a time.
    static let pageSize = 1000

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        let suite = try arguments.positionals("SUITE")[0]
        do { try Store.validate(suite: suite, key: "-") } catch { throw error.asCLIError }
        let context = try DeviceContext.open(home: invocation.home(arguments))
        // Watch before reading the starting point, so a commit in between is not missed.
        let watcher: ChangeWatcher
        do { watcher = try ChangeWatcher(home: context.home) } catch { throw .failure(error.description) }
        do {
            var position = try context.store.lastSequence()
            watching: while true {
                if watcher.wait(output: 1) == .outputClosed { return }  // standard output
                // A page at a time: a catch-up of many large values in other suites must not all be in
                // memory at once to print one line (found by review: 200 MB for one line).
                while true {
                    let page = try context.store.changes(after: position, limit: pageSize)
                    for change in page {
                        position = change.sequence
                        // Bytes, as the store compares names: Swift's `==` would also match another suite
                        // spelled with a different Unicode normalization.
                        guard change.entry.suite.utf8.elementsEqual(suite.utf8) else { continue }
                        guard Console.out(EntryFormatting.json(change.entry, includeDeletedFlag: true)) else { return }
                    }
                    if page.count < pageSize { break }
                }
                // A store moved aside, replaced or removed is no longer where writers write: once what it
                // held is printed, say so and stop, rather than wait for ever on a file no one else opens
                // (found by review).
                guard context.store.isStillAtItsPath else { break watching }
            }
        } catch {
            throw error.asCLIError
        }
        throw .failure("the store \(context.store.path) was moved, replaced or removed while watch ran; start watch again")
    }
}
