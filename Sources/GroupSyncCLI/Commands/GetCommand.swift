/// `groupsync get [--json] SUITE KEY`.
enum GetCommand: Command {
    static let name = "get"
    static let summary = "print a value (exit 1 if the key does not exist)"
    static let help = """
        usage: groupsync get [--json] SUITE KEY

        Prints the value: a string as it is; numbers, bools, arrays and dictionaries as JSON; dates in
        ISO 8601; data in base64. Exits 1 if the key does not exist (or was deleted).

          --json          print one object: suite, key, type, value, hlc, origin
        \(homeHelp)
        """
    static let flags = FlagSpec.with(switches: ["--json"])

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        let names = try arguments.positionals("SUITE", "KEY")
        let context = try DeviceContext.open(home: invocation.home(arguments))
        let found: GroupSyncCore.Entry?
        do {
            try GroupSyncStore.Store.validate(suite: names[0], key: names[1])
            found = try context.store.entry(suite: names[0], key: names[1])
        } catch { throw error.asCLIError }
        guard let entry = found, let value = entry.value else { throw .notFound("no key '\(names[1])' in suite '\(names[0])'") }
        Console.out(arguments.has("--json") ? EntryFormatting.json(entry) : EntryFormatting.plain(value))
    }
}

import GroupSyncCore
import GroupSyncStore
