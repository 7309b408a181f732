import GroupSyncStore

/// One `groupsync` subcommand: its name, its help, the flags it accepts, and what it does.
protocol Command: Sendable {
    static var name: String { get }
    /// One line for the overview in `groupsync --help`.
    static var summary: String { get }
    /// The full `--help` text.
    static var help: String { get }
    static var flags: FlagSpec { get }
    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError)
}

/// What every command gets besides its own arguments.
struct Invocation {
    var environment: [String: String]

    func home(_ arguments: ParsedArguments) throws(CLIError) -> Home {
        guard let home = Home.resolve(explicit: arguments.value("--home"), environment: environment) else {
            throw .usage("no home: HOME is not set and the user has no home directory; give --home DIR or set GROUPSYNC_HOME")
        }
        return home
    }
}

extension FlagSpec {
    /// Every command takes `--home DIR`.
    static func with(valued: Set<String> = [], switches: Set<String> = []) -> FlagSpec {
        FlagSpec(valued: valued.union(["--home"]), switches: switches)
    }
}

extension ParsedArguments {
    /// Exactly the positionals a command expects, or a usage error naming what is missing or extra.
    func positionals(_ names: String...) throws(CLIError) -> [String] {
        if positionals.count < names.count {
            throw .usage("missing \(names[positionals.count...].joined(separator: " "))")
        }
        if positionals.count > names.count {
            throw .usage("unexpected argument '\(positionals[names.count])'")
        }
        return positionals
    }
}

let homeHelp = "  --home DIR      the device's home (default: $GROUPSYNC_HOME, else $XDG_DATA_HOME/groupsync, else ~/.local/share/groupsync)"
