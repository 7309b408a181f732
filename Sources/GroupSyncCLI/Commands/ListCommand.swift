import GroupSyncStore

/// `groupsync list SUITE [--json]`: the live keys, one per line.
enum ListCommand: Command {
    static let name = "list"
    static let summary = "list the live keys of a suite"
    static let help = """
        usage: groupsync list [--json] SUITE

        Prints the live keys of SUITE, sorted, one per line. With --json, one object per line, as
        'get --json' prints it.

        \(homeHelp)
        """
    static let flags = FlagSpec.with(switches: ["--json"])

    /// Keys read per page: the whole suite in memory cost 347 MB for a million keys, and as much for
    /// `list | head -1` (found by review).
    static let pageSize = 1000

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        let suite = try arguments.positionals("SUITE")[0]
        let context = try DeviceContext.open(home: invocation.home(arguments))
        do { try Store.validate(suite: suite, key: "-") } catch { throw error.asCLIError }
        var last: String?
        while true {
            // Values are read without --json too: a damaged one stops `list` by name, as RELIABILITY.md says.
            let page: [GroupSyncCore.Entry]
            do { page = try context.store.liveEntries(suite: suite, after: last, limit: pageSize) } catch { throw error.asCLIError }
            for entry in page {
                guard Console.out(arguments.has("--json") ? EntryFormatting.json(entry) : entry.key) else { return }
            }
            guard page.count == pageSize else { return }
            last = page.last?.key
        }
    }
}

import GroupSyncCore
