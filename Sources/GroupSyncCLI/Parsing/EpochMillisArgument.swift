import GroupSyncCore
import GroupSyncStore

/// Times given on the command line in epoch milliseconds: `--at` of `usage record` and `fire`, `--armed-at`.
enum EpochMillisArgument {
    /// `--at`, when a threshold or callback fired, or now. Not later than now: guard 1 measures usage against
    /// the clock from the arming to it, and the action guards judge a firing by it, so a time in the future
    /// would pass usage that cannot have happened and actions not due yet. A second of slack for a caller
    /// that read the clock just before this process did.
    static func firedAt(_ arguments: ParsedArguments) throws(CLIError) -> Int64 {
        let now = WallClock.nowMillis()
        guard let text = arguments.value("--at") else { return now }
        let at = try epochMillis(text, flag: "--at")
        if at > now + 1000 {
            throw .badInput("--at \(at) is \((at - now + 999) / 1000) s in the future: report an event once it happened")
        }
        return at
    }

    static func epochMillis(_ text: String, flag: String) throws(CLIError) -> Int64 {
        guard let value = Int64(text), value >= 0, value < 100_000_000_000_000 else {
            throw .badInput("\(flag) must be a time in epoch milliseconds (a whole number, such as 1790000000000), not '\(text)'")
        }
        return value
    }
}
