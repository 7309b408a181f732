import Testing
@testable import GroupSyncCore

/// A steady stream of writes does not make a log line per write on either side: after a session's first
/// `sent` and `applied` line, one of each per interval, counting what it stands for, and the session's end
/// counts what went unlogged.
@Suite struct RoutineBatchLogTests {
    @Test func theFirstBatchOfAKindIsLoggedThenOnePerIntervalCountingTheRest() {
        var log = RoutineBatchLog(intervalMillis: 60_000)
        #expect(log.admit(.sent, entries: 3, atMonotonic: 1_000) == RoutineBatchLog.Unlogged())
        #expect(log.admit(.applied, entries: 1, atMonotonic: 1_000) == RoutineBatchLog.Unlogged(), "each kind on its own")
        #expect(log.admit(.sent, entries: 2, atMonotonic: 2_000) == nil)
        #expect(log.admit(.sent, entries: 5, atMonotonic: 60_999) == nil)
        #expect(log.admit(.sent, entries: 1, atMonotonic: 61_000) == RoutineBatchLog.Unlogged(batches: 2, entries: 7))
        #expect(log.admit(.sent, entries: 4, atMonotonic: 61_500) == nil)
        let drained = log.drain()
        #expect(drained.map(\.kind) == [.sent] && drained.first?.unlogged == RoutineBatchLog.Unlogged(batches: 1, entries: 4))
        #expect(log.drain().isEmpty, "counted once")
        #expect(RoutineBatchLog.details(RoutineBatchLog.Unlogged()) == "")
        #expect(RoutineBatchLog.details(RoutineBatchLog.Unlogged(batches: 2, entries: 7)) == " unlogged_batches=2 unlogged_entries=7")
    }

    @Test func aWriteASecondForTwoMinutesMakesAFewLinesNotOnePerWrite() {
        let net = ReplicationNetwork()
        let a = net.addNode("a"), b = net.addNode("b")
        let link = net.connected(a, b)
        let start = net.now
        for second in 1...120 {
            net.advance(to: start + Int64(second) * 1_000)
            net.set(a, "minutes", .int(Int64(second)))
            net.runUntilQuiet()
        }
        net.advance(to: start + 120_500)
        net.set(a, "minutes", .int(121))
        net.runUntilQuiet()
        #expect(b.store.entry(suite: "group.test", key: "minutes")?.value == .int(121))
        // a's first `sent` line is the session's opening batch (nothing to send yet, at 0 s); then one a minute,
        // at the writes of 60 s and 120 s. b's first `applied` is the write of 1 s, then that of 61 s.
        let sent = link.logs.filter { $0.hasPrefix("a: ") && $0.contains("event=sent ") && !$0.contains("entries=0") }
        let applied = link.logs.filter { $0.hasPrefix("b: ") && $0.contains("event=applied ") }
        #expect(sent.count == 2 && sent.allSatisfy { $0.contains("entries=1 unlogged_batches=59 unlogged_entries=59") }, "\(sent)")
        #expect(applied.count == 2 && applied.first?.contains("unlogged") == false, "\(applied)")
        #expect(applied.last?.contains("through=61 ") == true && applied.last?.contains("unlogged_batches=59 unlogged_entries=59") == true, "\(applied)")

        // The session's end says what went unlogged since the last line, on each side, before it closes.
        net.route(link.sessions[0]!.shutdown(reason: "test over"), from: 0, on: link)
        net.runUntilQuiet()
        let lastWords = link.logs.filter { $0.contains("event=unlogged-batches") }
        #expect(lastWords.count == 2, "\(lastWords)")
        #expect(lastWords.contains { $0.hasPrefix("a: ") && $0.hasSuffix("event=unlogged-batches sent_batches=1 sent_entries=1") }, "\(lastWords)")
        #expect(lastWords.contains { $0.hasPrefix("b: ") && $0.hasSuffix("event=unlogged-batches applied_batches=60 applied_entries=60") }, "\(lastWords)")
        let closing = link.logs.filter { $0.hasPrefix("a: ") }.suffix(2)
        #expect(closing.first?.contains("event=unlogged-batches") == true && closing.last?.contains("event=closed") == true, "\(closing)")
    }

    @Test func aNewSessionLogsItsFirstBatchAtOnce() {
        let net = ReplicationNetwork()
        let a = net.addNode("a"), b = net.addNode("b")
        let link = net.connected(a, b)
        net.set(a, "k", .string("one"))
        net.runUntilQuiet()
        net.disconnect(link)
        net.set(a, "k", .string("two"))
        let before = link.logs.count
        net.connect(link)
        net.runUntilQuiet()
        let catchUp = link.logs[before...].filter { $0.hasPrefix("b: ") && $0.contains("event=applied ") }
        #expect(catchUp.count == 1 && catchUp.first?.contains("entries=1") == true, "\(link.logs[before...])")
    }
}
