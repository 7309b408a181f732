import GroupSyncCore

/// `groupsync set SUITE KEY VALUE`, or with a type flag: `groupsync set SUITE KEY --double 0.25`.
enum SetCommand: Command {
    static let name = "set"
    static let summary = "store a value (a string, or --int/--double/--bool/--date/--data/--json)"
    static let help = """
        usage: groupsync set SUITE KEY VALUE
               groupsync set SUITE KEY (--int N | --double X | --bool B | --date ISO8601 | --data BASE64 | --json JSON)

        Stores a value under KEY in SUITE. Without a type flag VALUE is a string. With --json, integral
        numbers (written without '.' or exponent) become ints, others doubles, objects dictionaries;
        null is refused. A date-time needs Z or an offset (2026-11-29T13:15:00Z, 2026-11-29T14:15+01:00;
        seconds and their fraction optional); a date alone (2026-11-29) is midnight UTC. It is kept to the
        millisecond (rounded). When the command exits 0 the write is on disk. Use '--' before a string value
        that starts with '--'.

        \(homeHelp)
        """
    static let flags = FlagSpec.with(valued: Set(ValueArgument.typeFlags))

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        guard arguments.positionals.count >= 2 else { throw .usage("missing \(arguments.positionals.isEmpty ? "SUITE KEY" : "KEY")") }
        guard arguments.positionals.count <= 3 else { throw .usage("unexpected argument '\(arguments.positionals[3])' (quote a value with spaces)") }
        let (suite, key) = (arguments.positionals[0], arguments.positionals[1])
        let value = try ValueArgument.parse(arguments, positionalValue: arguments.positionals.count == 3 ? arguments.positionals[2] : nil)
        let context = try DeviceContext.open(home: invocation.home(arguments))
        let change: Change
        do { change = try context.store.set(value, suite: suite, key: key) } catch { throw error.asCLIError }
        ClockAheadWarning.check(change, command: name)
    }
}
