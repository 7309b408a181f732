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

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        let suite = try arguments.positionals("SUITE")[0]
        let context = try DeviceContext.open(home: invocation.home(arguments))
        let entries: [GroupSyncCore.Entry]
        do {
            try Store.validate(suite: suite, key: "-")
            entries = try context.store.liveEntries(suite: suite)
        } catch { throw error.asCLIError }
        for entry in entries {
            guard Console.out(arguments.has("--json") ? EntryFormatting.json(entry) : entry.key) else { return }
        }
    }
}

import GroupSyncCore
