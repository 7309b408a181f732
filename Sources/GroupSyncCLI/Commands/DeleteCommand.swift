import GroupSyncCore
import GroupSyncStore

/// `groupsync delete SUITE KEY`: writes a tombstone that replicates like any other write.
enum DeleteCommand: Command {
    static let name = "delete"
    static let summary = "delete a key (exit 1 if it does not exist)"
    static let help = """
        usage: groupsync delete SUITE KEY

        Deletes KEY from SUITE. The delete is recorded (a tombstone), so it reaches paired devices and a
        late-arriving older write cannot bring the key back. Exits 1 if the key does not exist.

        \(homeHelp)
        """
    static let flags = FlagSpec.with()

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        let names = try arguments.positionals("SUITE", "KEY")
        let context = try DeviceContext.open(home: invocation.home(arguments))
        let change: Change?
        do { change = try context.store.delete(suite: names[0], key: names[1]) } catch { throw error.asCLIError }
        ClockAheadWarning.check(change, command: name)
        guard change != nil else { throw .notFound("no key '\(names[1])' in suite '\(names[0])'") }
    }
}
