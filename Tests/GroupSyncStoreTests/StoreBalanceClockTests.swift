import Foundation
import Testing
import GroupSyncCore
@testable import GroupSyncStore

/// The balance's day never goes back before what the store has seen: setting the clock back a day must not
/// reopen that day's unused allowance once today's is spent (issue 5: "no loophole").
@Suite struct StoreBalanceClockTests {
    static let me = try! DeviceID(bytes: Array(repeating: 1, count: 32))
    static let day: Int64 = 86_400_000
    /// Noon UTC, 2026-03-10.
    static let noon: Int64 = 1_773_144_000_000

    final class ManualClock: @unchecked Sendable {
        var millis: Int64
        init(_ millis: Int64) { self.millis = millis }
        var function: @Sendable () -> Int64 { { self.millis } }
    }

    @Test func aClockSetBackADayDoesNotReopenThatDaysAllowance() throws {
        let folder = TemporaryFolder()
        let clock = ManualClock(Self.noon)
        let store = try Store(path: folder.path + "/store.db", device: Self.me, physicalClock: clock.function)
        try store.update(suite: BalanceSuite.name, writing: { _ throws(StoreError) in ([BalancePolicy.Key.dailyBase: .double(30)], ()) })
        // Joined three days ago, so the days before today are days it could have drawn on.
        clock.millis = Self.noon - 3 * Self.day
        try store.updateBalance(nowMillis: clock.millis) { $0.register() }
        clock.millis = Self.noon
        #expect(try store.updateBalance(nowMillis: clock.millis) { $0.spend(30 * 60_000) } == 30 * 60_000)
        #expect(try store.updateBalance(nowMillis: clock.millis) { $0.summary.timeUp })

        // The clock set back one day, then two: still today, nothing left to spend.
        for back in [1, 2] as [Int64] {
            clock.millis = Self.noon - back * Self.day
            let spent = try store.updateBalance(nowMillis: clock.millis) { $0.spend(30 * 60_000) }
            #expect(spent == 0, "\(back) day(s) back: spent \(spent / 60_000) min")
            #expect(try store.updateBalance(nowMillis: clock.millis) { ($0.today, $0.summary.remainingMs) } == (CivilDate(year: 2026, month: 3, day: 10)!, 0))
        }
        // The next real day opens as usual.
        clock.millis = Self.noon + Self.day
        #expect(try store.updateBalance(nowMillis: clock.millis) { $0.spend(30 * 60_000) } == 30 * 60_000)
    }
}
