import Synchronization
import Testing
@testable import GroupSyncDaemon

/// Lines a stranger can repeat at will are let through once per interval per key (`LogThrottle`).
@Suite struct LogThrottleTests {
    final class Recorder: Sendable {
        let now = Atomic<Int64>(0)
        let lines = Mutex<[String]>([])
        var written: [String] { lines.withLock { $0 } }
        func throttle() -> LogThrottle {
            LogThrottle(intervalMillis: 60_000, clock: { self.now.load(ordering: .relaxed) }) { line in self.lines.withLock { $0.append(line) } }
        }
    }

    @Test func aKeyIsLoggedOncePerIntervalWithItsRepeatsCounted() {
        let recorder = Recorder()
        let throttle = recorder.throttle()
        for _ in 0..<5 { throttle.write(key: "refused", "event=refused") }
        #expect(recorder.written == ["event=refused"])
        throttle.write(key: "other", "event=other")
        recorder.now.store(60_000, ordering: .relaxed)
        throttle.write(key: "refused", "event=refused")
        #expect(recorder.written == ["event=refused", "event=other", "event=refused repeated=4"])
    }

    /// Past a thousand keys, the ones whose interval has passed with nothing held back are forgotten first: a
    /// key still counting repeats keeps its count (it used to be forgotten with every other key).
    @Test func manyKeysForgetTheSpentOnesAndKeepTheCounts() {
        let recorder = Recorder()
        let throttle = recorder.throttle()
        throttle.write(key: "flood", "event=flood")
        throttle.write(key: "flood", "event=flood")
        recorder.now.store(60_001, ordering: .relaxed)
        for index in 0..<(LogThrottle.maxKeys + 100) { throttle.write(key: "stranger \(index)", "event=stranger") }
        throttle.write(key: "flood", "event=flood")
        #expect(recorder.written.last == "event=flood repeated=1")
        #expect(recorder.written.count == 2 + LogThrottle.maxKeys + 100 + 1 - 1, "each new key once; flood twice")
    }
}
