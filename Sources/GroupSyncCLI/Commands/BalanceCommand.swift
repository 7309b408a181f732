import GroupSyncCore
import GroupSyncStore

/// `groupsync balance [policy|earn|extend|spend]`: the screen-time balance shared by the user's devices.
enum BalanceCommand: Command {
    static let name = "balance"
    static let summary = "show, earn, extend and spend the screen-time balance shared by your devices"
    static let help = """
        usage: groupsync balance [--json]
               groupsync balance policy [--daily-base M] [--extension M] [--max-extensions N] [--timezone TZ] [--json]
               groupsync balance earn MINUTES [--reason TEXT] [--json]
               groupsync balance extend [--json]
               groupsync balance spend MINUTES [--json]

        One balance of minutes across all paired devices: a daily allowance and puzzle extensions that
        expire at the end of the local day (in the policy's time zone, daylight-saving days included),
        plus earned minutes that carry over. Spending takes today's allowance and extensions first,
        then earned minutes.

        Each device holds part of the balance as rights; the daemons keep idle rights spread over the
        connected devices, and hand them over on request, so while connected any device can spend the
        whole balance. A device cut off from the others can spend only what it holds: going offline
        never buys extra minutes, and every spend counts exactly once when the devices meet again.

          (no subcommand)  today's balance: remaining, day, allowance, extensions, earned, spent today,
                           held here; --json prints one object with remainingMinutes, day,
                           allowanceMinutes, extensionsToday, maxExtensions, extensionMinutes,
                           earnedMinutes, spentTodayMinutes, timeUp, strandedMinutes, owedMinutes,
                           heldHereMinutes, extensionSlotsHere, timeZone, dayStartMillis,
                           dayEndMillis, devices, waitingForPairedDevices
          policy           show the policy, or change the given fields (shared by all devices); a raise
                           of the daily base counts at once, a cut from the next day for allowance
                           devices already drew today; days already over keep the base they had
            --daily-base M       minutes of allowance per day (default 0)
            --extension M        minutes one puzzle extension adds (default 5)
            --max-extensions N   extensions allowed per day (default 5); a change counts at once,
                                 a cut included, for every device that has heard of it
            --timezone TZ        the zone days are counted in: an IANA name such as Europe/Madrid,
                                 UTC (the default), or a POSIX rule such as CET-1CEST,M3.5.0,M10.5.0/3
                                 (POSIX counts hours west of UTC: UTC-2 is two hours ahead of UTC); every
                                 device reads an IANA name from its own tzdata, so a rule suits a group
                                 whose tzdata differ
          earn MINUTES     add earned minutes (e.g. push-ups); --reason TEXT notes why
          extend           grant one puzzle extension for today; refused past the daily cap
          spend MINUTES    spend up to MINUTES: what this device holds, after asking connected devices
                           for theirs (waits at most 2 s), and no more than remains once what the
                           devices owe is paid; says how much was spent
          --json           print JSON instead of text: policy prints dailyBaseMinutes, extensionMinutes
                           (the size of one), maxExtensions, timeZone (also as timezone); earn prints
                           earnedMinutes (this earning), remainingMinutes, timeUp; extend prints
                           extensionsToday, maxExtensions, addedMinutes, remainingMinutes, timeUp; spend
                           prints requestedMinutes, spentMinutes, remainingMinutes, timeUp
        \(homeHelp)
        """
    static let flags = FlagSpec.with(valued: ["--daily-base", "--extension", "--max-extensions", "--timezone", "--reason"], switches: ["--json"])

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        var rest = arguments
        let verb = rest.positionals.isEmpty ? "" : rest.positionals.removeFirst()
        let policyFlags = ["--daily-base", "--extension", "--max-extensions", "--timezone"]
        if verb != "policy", let flag = policyFlags.first(where: { arguments.value($0) != nil }) {
            throw .usage("\(flag) goes with 'balance policy'")
        }
        if verb != "earn", arguments.value("--reason") != nil { throw .usage("--reason goes with 'balance earn'") }
        switch verb {
        case "": _ = try rest.positionals(); try show(rest, invocation)
        case "policy": _ = try rest.positionals(); try policy(rest, invocation)
        case "earn": try earn(rest, invocation)
        case "extend": _ = try rest.positionals(); try extend(rest, invocation)
        case "spend": try spend(rest, invocation)
        default: throw .usage("unknown balance command '\(verb)': use policy, earn, extend or spend")
        }
    }

    private static func session(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) -> BalanceSession {
        BalanceSession(context: try DeviceContext.open(home: invocation.home(arguments)), environment: invocation.environment)
    }

    private static func show(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        let (summary, zone) = try session(arguments, invocation).update { book in
            book.register()
            return (book.summary, book.ledger.policy.timeZone)
        }
        Console.out(arguments.has("--json") ? BalanceFormatting.json(summary, timeZone: zone) : BalanceFormatting.text(summary, timeZone: zone))
    }

    // MARK: policy

    private static func policy(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        var writes: [String: Value] = [:]
        let dailyBase = try arguments.value("--daily-base").map { text throws(CLIError) in try minutes(text, flag: "--daily-base", allowZero: true) }
        if let text = arguments.value("--extension") {
            writes[BalancePolicy.Key.extensionSize] = .double(try minutes(text, flag: "--extension", allowZero: true))
        }
        if let text = arguments.value("--max-extensions") {
            guard let n = Int64(text), BalancePolicy.maxExtensionsRange.contains(n) else {
                throw .badInput("--max-extensions must be a whole number from 0 to \(BalancePolicy.maxExtensionsRange.upperBound), not '\(text)'")
            }
            writes[BalancePolicy.Key.maxExtensions] = .int(n)
        }
        if let zone = arguments.value("--timezone") {
            do { _ = try ZoneInfo.calendar(named: zone, environment: invocation.environment) } catch { throw .badInput("--timezone: \(error)") }
            writes[BalancePolicy.Key.timeZone] = .string(zone)
        }
        let session = try session(arguments, invocation)
        if !writes.isEmpty {
            do {
                try session.context.store.update(suite: BalanceSuite.name, writing: { _ throws(StoreError) in (writes, ()) })
            } catch { throw error.asCLIError }
        }
        let (policy, summary) = try session.update { book in
            // Through the book, after a new zone: the change is dated today there, for the days before it.
            if let dailyBase { book.setDailyBase(minutes: dailyBase) }
            return (book.ledger.policy, book.summary)
        }
        if summary.allowanceMs > policy.dailyBaseMs {
            Console.error("note: today's allowance stays \(BalanceFormatting.minutes(summary.allowanceMs)) min, already issued to devices; the daily base applies from tomorrow")
        }
        if arguments.has("--json") {
            var o = JSONObject()
            o.add("dailyBaseMinutes", .double(BalanceAmount.minutes(policy.dailyBaseMs)))
            o.add("extensionMinutes", .double(BalanceAmount.minutes(policy.extensionMs)))
            o.add("maxExtensions", .int(policy.maxExtensions))
            o.add("timezone", policy.timeZone)
            // As `balance --json` names it; `timezone` stays for the scripts that read it (found by review).
            o.add("timeZone", policy.timeZone)
            Console.out(o.text)
        } else {
            Console.out("""
                daily base      \(BalanceFormatting.minutes(policy.dailyBaseMs)) min
                extension       \(BalanceFormatting.minutes(policy.extensionMs)) min
                max extensions  \(policy.maxExtensions) a day
                time zone       \(policy.timeZone)
                """)
        }
    }

    // MARK: earn, extend, spend

    private static func earn(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        let ms = BalanceAmount.millis(minutes: try minutes(try arguments.positionals("MINUTES")[0], flag: "MINUTES", allowZero: false), in: BalancePolicy.minutesRange)!
        let reason = arguments.value("--reason") ?? ""
        guard reason.utf8.count <= 200, !reason.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .badInput("--reason must be at most 200 bytes without control characters")
        }
        let summary = try session(arguments, invocation).update { book in
            book.earn(ms, reason: reason)
            return book.summary
        }
        if arguments.has("--json") {
            var o = JSONObject()
            o.add("earnedMinutes", .double(BalanceAmount.minutes(ms)))
            o.add("remainingMinutes", .double(summary.remainingMinutes))
            o.add("timeUp", summary.timeUp)
            Console.out(o.text)
        } else {
            Console.out("earned \(BalanceFormatting.minutes(ms)) min; \(BalanceFormatting.minutes(summary.remainingMs)) min remaining")
        }
    }

    private static func extend(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        let session = try session(arguments, invocation)
        func attempt() throws(CLIError) -> BalanceBook.ExtendOutcome {
            try session.update { $0.extendOrWithdrawRequest() }
        }
        let outcome = try session.takingTurns { () throws(CLIError) -> BalanceBook.ExtendOutcome in
            let first = try attempt()
            guard case .noSlotHere = first else { return first }
            try session.askPeers({ $0.request(holdMs: 0, slots: 1) }, until: { $0.ledger.freeSlots(of: $0.me, today: $0.today) > 0 })
            return try attempt()
        }
        switch outcome {
        case let .granted(count, cap, added):
            let summary = try session.update { $0.summary }
            if arguments.has("--json") {
                var o = JSONObject()
                o.add("extensionsToday", .int(count))
                o.add("maxExtensions", .int(cap))
                o.add("addedMinutes", .double(BalanceAmount.minutes(added)))
                o.add("remainingMinutes", .double(summary.remainingMinutes))
                o.add("timeUp", summary.timeUp)  // as earn and spend print it (found by review)
                Console.out(o.text)
            } else {
                Console.out("extension \(count) of \(cap) granted: +\(BalanceFormatting.minutes(added)) min until the end of today; \(BalanceFormatting.minutes(summary.remainingMs)) min remaining")
            }
        case let .capReached(used, cap):
            throw .badInput("no extension left today: \(used) of \(cap) used; the allowance starts again tomorrow")
        case let .noSlotHere(used, cap):
            if try session.update({ $0.summary.waitingForPairedDevices }) { throw .badInput("no extension yet: the balance has " + BalanceFormatting.notStarted) }
            throw .badInput("\(used) of \(cap) extensions used, but the rest are held by devices this one cannot reach now; try again when they are connected")
        }
    }

    private static func spend(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        let ms = BalanceAmount.millis(minutes: try minutes(try arguments.positionals("MINUTES")[0], flag: "MINUTES", allowZero: false), in: BalancePolicy.minutesRange)!
        let session = try session(arguments, invocation)
        let (spent, summary) = try session.takingTurns { () throws(CLIError) -> (Int64, BalanceSummary) in
            let holdsEnough = try session.update { book -> Bool in
                book.register()
                return book.ledger.heldMs(of: book.me, today: book.today) >= ms
            }
            if !holdsEnough {
                try session.askPeers({ $0.request(holdMs: ms) }, until: { $0.ledger.heldMs(of: $0.me, today: $0.today) >= ms })
            }
            return try session.update { book in
                let spent = book.spend(ms)
                return (spent, book.summary)
            }
        }
        if arguments.has("--json") {
            var o = JSONObject()
            o.add("requestedMinutes", .double(BalanceAmount.minutes(ms)))
            o.add("spentMinutes", .double(BalanceAmount.minutes(spent)))
            o.add("remainingMinutes", .double(summary.remainingMinutes))
            o.add("timeUp", summary.timeUp)
            Console.out(o.text)
        } else {
            let note = spent == ms ? "" : summary.waitingForPairedDevices ? " (the balance has \(BalanceFormatting.notStarted))"
                : spent == 0 ? " (this device holds no minutes it can spend now)" : " (all this device could spend now)"
            Console.out("spent \(BalanceFormatting.minutes(spent)) of \(BalanceFormatting.minutes(ms)) min\(note); \(BalanceFormatting.minutes(summary.remainingMs)) min remaining\(summary.timeUp ? "; time's up" : "")")
        }
    }

    /// A number of minutes from the command line, within the policy's range.
    private static func minutes(_ text: String, flag: String, allowZero: Bool) throws(CLIError) -> Double {
        // "Above 0" means at least a millisecond, the unit the balance counts in: 1e-10 would round to
        // nothing and report success for a change that did not happen.
        guard let value = DecimalNumber.parse(text), let millis = BalanceAmount.millis(minutes: value, in: BalancePolicy.minutesRange),
              allowZero || millis > 0 else {
            let bound = Int(BalancePolicy.minutesRange.upperBound)
            throw .badInput("\(flag) must be a number of minutes \(allowZero ? "from 0" : "above 0 (at least a millisecond)") up to \(bound), not '\(text)'")
        }
        return value
    }
}
