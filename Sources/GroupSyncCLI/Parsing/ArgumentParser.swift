/// A small, strict argument parser: every command declares its flags, and anything else is a usage error
/// (exit 2) that names the problem. Strictness is the point: the command line is a public contract, and
/// a silently ignored typo in a script is worse than a refusal.
struct ParsedArguments {
    var positionals: [String] = []
    var values: [String: String] = [:]
    var switches: Set<String> = []
    var wantsHelp = false

    func value(_ flag: String) -> String? { values[flag] }
    func has(_ flag: String) -> Bool { switches.contains(flag) || values[flag] != nil }
}

struct FlagSpec {
    /// Flags that take a value, e.g. `--home DIR`.
    var valued: Set<String> = []
    /// Flags that stand alone, e.g. `--json`.
    var switches: Set<String> = []
}

enum ArgumentParser {
    static func parse(_ arguments: ArraySlice<String>, spec: FlagSpec) throws(CLIError) -> ParsedArguments {
        var parsed = ParsedArguments()
        var index = arguments.startIndex
        var optionsEnded = false
        while index < arguments.endIndex {
            var argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("--") || argument == "-" {
                // `-h` asks for help only before any positional: after one it is a value like `-x` (`set S K -h`
                // stores "-h"), not a help request that would exit 0 having written nothing.
                if !optionsEnded && argument == "-h" && parsed.positionals.isEmpty { parsed.wantsHelp = true; continue }
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" { optionsEnded = true; continue }
            if argument == "--help" { parsed.wantsHelp = true; continue }
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "=") {
                inlineValue = String(argument[argument.index(after: equals)...])
                argument = String(argument[..<equals])
            }
            if spec.valued.contains(argument) {
                guard parsed.values[argument] == nil else { throw .usage("\(argument) is given twice") }
                // An empty `--home` (`--home "$UNSET"`) must not fall back to the default home: the command would
                // then read or write the user's real device instead of the one the script meant.
                if argument == "--home" && (inlineValue ?? (index < arguments.endIndex ? arguments[index] : nil)) == "" {
                    throw .usage("--home needs a folder, not an empty value")
                }
                if let inlineValue {
                    parsed.values[argument] = inlineValue
                } else {
                    guard index < arguments.endIndex else { throw .usage("\(argument) needs a value") }
                    parsed.values[argument] = arguments[index]
                    index += 1
                }
            } else if spec.switches.contains(argument) {
                guard inlineValue == nil else { throw .usage("\(argument) takes no value") }
                parsed.switches.insert(argument)
            } else {
                throw .usage("unknown option \(argument)")
            }
        }
        return parsed
    }
}
