/// Where the balance lives: ordinary entries of one reserved suite, carried by replication unchanged.
///
/// Every key that holds a device's ID is written only by that device, and its value only grows
/// (or, for a usage charge, is revised only by its owner), so last-writer-wins on such a key is the
/// same as taking the maximum: concurrent writes on different devices never touch the same key, and
/// no spend or earning can be lost to a merge. Only the policy keys are shared, and for them
/// last-writer-wins is the intended meaning.
///
/// | key | written by | value |
/// |---|---|---|
/// | `policy.dailyBaseMinutes`, `policy.extensionMinutes`, `policy.maxExtensions`, `policy.timezone` | anyone | double / double / int / string |
/// | `member.<device>` | device | `{joinedAt, founder}` |
/// | `quota.<device>` | device | its quota gifts `[{to, root, start, end, fromDay}]` |
/// | `day.<device>.<YYYY-MM-DD>` | device | `{allowanceMs, slots, extensions, extensionMs, spentMs, lastSpendAt, lastExtendAt}` |
/// | `earned.<device>` | device | `{ms, count, lastAt, lastReason}` |
/// | `give.<from>.<to>.<YYYY-MM-DD>` | from | day rights and extension slots handed over: `{ms, slots}` (running totals) |
/// | `give.<from>.<to>.earned` | from | earned rights handed over: `{ms}` (running total) |
/// | `want.<device>` | device | a request for rights while connected: `{day, holdMs, slots, spentBase, extensionsBase, at}` |
/// | `fired.<…>` | any reporter | a usage threshold event: `{activity, event, minutes, armedAt, at}` |
/// | `charge.<device>.<armedAt>.<activity>` | device | usage of one monitor this device paid for: `{activity, armedAt, day, ms, at}` |
public enum BalanceSuite {
    public static let name = "groupsync.balance"
}

/// Amounts are integral milliseconds of screen time: quarter minutes (15 000 ms) are exact, and sums
/// never drift the way repeated floating-point additions would.
public enum BalanceAmount {
    public static let millisPerMinute: Int64 = 60_000

    /// Minutes as given on the command line, in milliseconds; `nil` if not a finite number in `range`.
    public static func millis(minutes: Double, in range: ClosedRange<Double>) -> Int64? {
        guard minutes.isFinite, range.contains(minutes) else { return nil }
        return Int64((minutes * Double(millisPerMinute)).rounded())
    }

    public static func minutes(_ millis: Int64) -> Double { Double(millis) / Double(millisPerMinute) }
}
