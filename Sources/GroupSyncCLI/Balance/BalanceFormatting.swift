import GroupSyncCore

/// How the balance looks on the command line.
enum BalanceFormatting {
    /// Minutes as a person reads them: `5`, `12.5`, `0.25`, `8.92` (`MinutesText`).
    static func minutes(_ ms: Int64) -> String {
        MinutesText.format(BalanceAmount.minutes(ms))
    }

    static func json(_ s: BalanceSummary, timeZone: String) -> String {
        var o = JSONObject()
        o.add("remainingMinutes", .double(BalanceAmount.minutes(s.remainingMs)))
        o.add("strandedMinutes", .double(BalanceAmount.minutes(s.strandedMs)))
        o.add("owedMinutes", .double(BalanceAmount.minutes(s.owedMs)))
        o.add("day", s.day.description)
        o.add("allowanceMinutes", .double(BalanceAmount.minutes(s.allowanceMs)))
        o.add("extensionsToday", .int(s.extensionsToday))
        o.add("maxExtensions", .int(s.maxExtensions))
        o.add("extensionMinutes", .double(BalanceAmount.minutes(s.extensionMs)))
        o.add("earnedMinutes", .double(BalanceAmount.minutes(s.earnedMs)))
        o.add("spentTodayMinutes", .double(BalanceAmount.minutes(s.spentTodayMs)))
        o.add("timeUp", s.timeUp)
        o.add("heldHereMinutes", .double(BalanceAmount.minutes(s.heldHereMs)))
        o.add("extensionSlotsHere", .int(s.extensionSlotsHere))
        o.add("timeZone", timeZone)
        o.add("dayStartMillis", .int(s.dayStartMillis))
        o.add("dayEndMillis", .int(s.dayEndMillis))
        o.add("devices", s.devices)
        o.add("waitingForPairedDevices", s.waitingForPairedDevices)
        return o.text
    }

    static func text(_ s: BalanceSummary, timeZone: String) -> String {
        let hours = Double(s.dayEndMillis - s.dayStartMillis) / 3_600_000
        let dayNote = hours == 24 ? "" : ", a \(hours == hours.rounded() ? String(Int(hours)) : String(hours))-hour day"
        return """
            remaining    \(minutes(s.remainingMs)) min\(s.strandedMs > 0 ? ", \(minutes(s.strandedMs)) of them held by a store moved aside (not spendable)" : "")\(s.timeUp ? "  (time's up)" : "")
            day          \(s.day) (\(timeZone)\(dayNote))
            allowance    \(minutes(s.allowanceMs)) min
            extensions   \(s.extensionsToday) of \(s.maxExtensions) (+\(minutes(s.extensionMs)) min)
            earned       \(minutes(s.earnedMs)) min
            spent today  \(minutes(s.spentTodayMs)) min\(s.owedMs > 0 ? "; \(minutes(s.owedMs)) min of usage not paid for yet, taken from the next minutes that come" : "")
            held here    \(minutes(s.heldHereMs)) min, \(s.extensionSlotsHere) extension slot\(s.extensionSlotsHere == 1 ? "" : "s")
            """ + (s.waitingForPairedDevices ? "\n" + notStarted : "")
    }

    /// Why there is no allowance yet (`BalanceSummary.waitingForPairedDevices`).
    static let notStarted = "not started: the daily allowance begins once every paired device has connected at least once (or is unpaired with 'groupsync peer remove')"
}
