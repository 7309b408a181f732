/// Where the balance lives: ordinary entries of one reserved suite, carried by replication unchanged.
///
/// Every key that names an account is written only by that account — one device writing from one store
/// (`BalanceAccount`: `<device>@<epoch>`, the epoch being the store ID) — and its value only grows (or,
/// for a usage charge, is revised only by its owner), so last-writer-wins on such a key is the same as
/// taking the maximum: concurrent writes on different devices never touch the same key, and no spend or
/// earning can be lost to a merge. The epoch is what keeps that true when a store is moved aside: the
/// device starts again from nothing under a new epoch, beside its old records instead of over them.
/// Only the policy keys are shared, and for them last-writer-wins is the intended meaning.
///
/// | key | written by | value |
/// |---|---|---|
/// | `policy.dailyBaseMinutes`, `policy.extensionMinutes`, `policy.maxExtensions`, `policy.timezone` | anyone | double / double / int / string |
/// | `member.<account>` | account | `{joinedAt, founder, inheritsFrom}` (`inheritsFrom`: the first day it draws its device's earlier epochs' quota slices) |
/// | `quota.<account>` | account | its quota gifts `[{to, root, start, end, fromDay}]` (`to`, `root`: accounts) |
/// | `day.<account>.<YYYY-MM-DD>` | account | `{allowanceMs, slots, extensions, extensionMs, spentMs, lastSpendAt, lastExtendAt}` |
/// | `earned.<account>` | account | `{ms, count, lastAt, lastReason}` |
/// | `give.<from>.<to>.<YYYY-MM-DD>` | from | day rights and extension slots handed over: `{ms, slots}` (running totals) |
/// | `give.<from>.<to>.earned` | from | earned rights handed over: `{ms}` (running total) |
/// | `want.<account>` | account | a request for rights while connected: `{day, holdMs, slots, spentBase, extensionsBase, at}` |
/// | `fired.<…>` | any reporter | a usage threshold event: `{activity, event, minutes, armedAt, at}` |
/// | `charge.<account>.<armedAt>.<activity>` | account | usage of one monitor this account paid for: `{activity, armedAt, day, ms, at, earlierDays}` (`ms`: the total; `earlierDays`: `{YYYY-MM-DD: ms}` paid on days before `day`) |
///
/// `<account>` is `<device>@<epoch>`: the device ID in its canonical text form, `@`, and the store ID of
/// the store that writes (1–64 of `A–Z a–z 0–9 - _`). A key with the device alone is the device's
/// *legacy* epoch: records written before epochs were part of the keys. They are read and counted like
/// any other epoch's, and the store that wrote them (one made before this layout) keeps writing them;
/// every store made since writes under its own epoch. A key whose account is not canonical, or whose
/// entry was not written by the device it names, is ignored.
public enum BalanceSuite {
    public static let name = "groupsync.balance"
}

/// Amounts are integral milliseconds of screen time: quarter minutes (15 000 ms) are exact, and sums
/// never drift the way repeated floating-point additions would.
public enum BalanceAmount {
    public static let millisPerMinute: Int64 = 60_000

    /// The most any one record field may hold (10¹² ms, about 31 years of screen time): larger numbers,
    /// which only a damaged or hostile record holds, read as this. Sums of many such fields still fit.
    public static let maxRecordMs: Int64 = 1_000_000_000_000
    /// Instants a record may name: 1970 up to (not including) 10¹⁴ ms, about the year 5138 — the range
    /// the CLI accepts for `--armed-at` and `--at`. Within it, an instant plus any amount cannot overflow.
    public static let instantRange: ClosedRange<Int64> = 0...(100_000_000_000_000 - 1)

    /// Minutes as given on the command line, in milliseconds; `nil` if not a finite number in `range`.
    public static func millis(minutes: Double, in range: ClosedRange<Double>) -> Int64? {
        guard minutes.isFinite, range.contains(minutes) else { return nil }
        return Int64((minutes * Double(millisPerMinute)).rounded())
    }

    public static func minutes(_ millis: Int64) -> Double { Double(millis) / Double(millisPerMinute) }
}
