import GroupSyncCore
import GroupSyncStore

/// `groupsync usage record`: a usage threshold event, as the device-activity monitor delivers it.
enum UsageCommand: Command {
    static let name = "usage"
    static let summary = "record a usage threshold event (used-N) and spend the genuine usage from the balance"
    static let help = """
        usage: groupsync usage record --activity NAME --event used-N --armed-at MS [--at MS] [--json]

        Records that the monitor armed at MS (epoch milliseconds) for activity NAME reached the threshold
        used-N (N minutes of use, such as used-0.25 or used-7) at --at (epoch ms; default now), and
        spends the monitor's genuine usage from the balance. A monitor's usage is its highest genuine
        threshold, not a sum; the same event reported twice, or by two devices, counts once.

        Phantom thresholds (iOS 26 fires some with no real use) are not believed:
          guard 1  used-N that fires before armed-at + N minutes - 5 s is ignored: usage cannot run
                   faster than the clock
          guard 2  if the lowest and highest thresholds of a monitor are 1 minute of usage or more apart
                   but fired within 3 s of each other, the whole burst is a phantom and spends nothing

        Names must not be empty or contain '_' (fired events are stored under keys split on '_', so
        used_7 would never match); such names are refused, never rewritten.

          --activity NAME  the monitor's activity name
          --event used-N   the threshold event's name
          --armed-at MS    when the monitor was armed (epoch ms)
          --at MS          when the threshold fired (epoch ms; default now; not later than now)
          --json           one object: activity, event, minutes, armedAt, at, counted, reason,
                           duplicate, monitorUsageMinutes, chargedMinutes, uncoveredMinutes,
                           remainingMinutes, timeUp
        \(homeHelp)
        """
    static let flags = FlagSpec.with(valued: ["--activity", "--event", "--armed-at", "--at"], switches: ["--json"])

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        var rest = arguments
        guard let verb = rest.positionals.first else { throw .usage("missing record") }
        rest.positionals.removeFirst()
        guard verb == "record" else { throw .usage("unknown usage command '\(verb)': use record") }
        _ = try rest.positionals()
        guard let activity = arguments.value("--activity") else { throw .usage("missing --activity NAME") }
        guard let eventName = arguments.value("--event") else { throw .usage("missing --event used-N") }
        guard let armedText = arguments.value("--armed-at") else { throw .usage("missing --armed-at MS") }
        if let problem = ActivityNames.problem(with: activity, what: "activity") { throw .badInput(problem) }
        let threshold: UsageThresholdName
        do { threshold = try UsageThresholdName(parsing: eventName) } catch { throw .badInput(error.description) }
        let armedAt = try EpochMillisArgument.epochMillis(armedText, flag: "--armed-at")
        let at = try EpochMillisArgument.firedAt(arguments)
        let monitor = MonitorID(activity: activity, armedAt: armedAt)

        let session = BalanceSession(context: try DeviceContext.open(home: invocation.home(arguments)), environment: invocation.environment)
        let outcome = try session.takingTurns { () throws(CLIError) -> UsageRecordOutcome in
            let outcome = try session.update { $0.recordUsage(monitor: monitor, threshold: threshold, at: at) }
            guard outcome.uncoveredMs > 0 else { return outcome }
            // This device lacks the rights for the usage: ask connected devices, then pay what arrived.
            let needed = outcome.uncoveredMs
            try session.askPeers({ book in book.request(holdMs: book.ledger.heldMs(of: book.me, today: book.today) + needed) },
                                 until: { book in
                                     var trial = book
                                     trial.settleUsage()
                                     return trial.uncoveredMs(monitor) == 0
                                 })
            return try session.update { $0.payWithArrivedRights(outcome) }
        }
        let summary = try session.update { $0.summary }
        if arguments.has("--json") {
            var o = JSONObject()
            o.add("activity", activity)
            o.add("event", threshold.name)
            o.add("minutes", .double(BalanceAmount.minutes(threshold.usedMs)))
            o.add("armedAt", .int(armedAt))
            o.add("at", .int(at))
            o.add("counted", outcome.counted)
            o.add("reason", outcome.reason.rawValue)
            o.add("duplicate", outcome.duplicate)
            o.add("monitorUsageMinutes", .double(BalanceAmount.minutes(outcome.verdict.usedMs)))
            o.add("chargedMinutes", .double(BalanceAmount.minutes(outcome.chargedMs)))
            o.add("uncoveredMinutes", .double(BalanceAmount.minutes(outcome.uncoveredMs)))
            o.add("remainingMinutes", .double(summary.remainingMinutes))
            o.add("timeUp", summary.timeUp)
            Console.out(o.text)
            return
        }
        let what: String
        switch outcome.reason {
        case .tooEarly: what = "ignored: fired before \(threshold.name) could be reached since arming (phantom guard 1)"
        case .phantomBurst: what = "ignored: this monitor's thresholds fired as one burst (phantom guard 2); the burst spends nothing"
        case .genuine: what = outcome.duplicate ? "already recorded; counted once" : "counted"
        }
        var line = "\(threshold.name) of \(activity): \(what); monitor usage \(BalanceFormatting.minutes(outcome.verdict.usedMs)) min"
        if outcome.chargedMs != 0 { line += "; \(outcome.chargedMs > 0 ? "spent" : "gave back") \(BalanceFormatting.minutes(abs(outcome.chargedMs))) min" }
        if outcome.uncoveredMs > 0 { line += "; \(BalanceFormatting.minutes(outcome.uncoveredMs)) min not covered by the balance" }
        line += "; \(BalanceFormatting.minutes(summary.remainingMs)) min remaining\(summary.timeUp ? "; time's up" : "")"
        Console.out(line)
    }
}
