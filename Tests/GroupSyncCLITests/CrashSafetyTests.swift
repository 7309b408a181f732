import Foundation
import GroupSyncCore
import GroupSyncStore
import GroupSyncTestSupport
import Testing

/// kill -9 with the real binary: daemons and writers die at random moments during a stream of writes and
/// during a catch-up. Afterwards no acknowledged write (a `set` that exited 0) is missing, the peers
/// converge, and SQLite's integrity check passes. The moments are drawn from a seed printed with any failure
/// (set GROUPSYNC_CRASH_SEED to reuse one); the OS still decides the exact interleaving.
@Suite(.serialized) struct CrashSafetyTests {
    static let seed: UInt64 = ProcessInfo.processInfo.environment["GROUPSYNC_CRASH_SEED"].flatMap { UInt64($0) }
        ?? UInt64(Date().timeIntervalSince1970 * 1000) % 1_000_000

    @Test func killNineOfDaemonsAndWritersDuringAStreamOfWrites() throws {
        var random = SeededGenerator(seed: Self.seed)
        let context = "crash seed \(Self.seed) (GROUPSYNC_CRASH_SEED=\(Self.seed) replays the schedule)"
        let folder = TemporaryFolder()
        let a = try TestDevice("a", in: folder), b = try TestDevice("b", in: folder)
        for device in [a, b] { try device.start() }
        try pairAll([a, b])

        // Writers on both devices, each killed now and then while its `set` runs.
        let writers = [Writer(device: a, prefix: "a", seed: random.next()), Writer(device: b, prefix: "b", seed: random.next())]
        for writer in writers { writer.start() }
        // Meanwhile the daemons die at random moments and come back after a random pause: for 5 s, and on until
        // the run has done what it is for, within 30 s (on a loaded machine 5 s once saw one writer killed once).
        let started = Date()
        var kills = 0
        let exercised = { writers.allSatisfy { $0.acknowledged.count > 20 && $0.killed > 2 } && kills > 4 }
        while Date().timeIntervalSince(started) < 5 || (!exercised() && Date().timeIntervalSince(started) < 30) {
            Thread.sleep(forTimeInterval: Double.random(in: 0.1...0.6, using: &random))
            let victim = random.chance(0.5) ? a : b
            victim.stop(signal: SIGKILL)
            kills += 1
            Thread.sleep(forTimeInterval: Double.random(in: 0...0.4, using: &random))
            try victim.start()
        }
        for writer in writers { writer.stop() }
        let acknowledged = writers.flatMap(\.acknowledged)
        #expect(exercised(),
                "\(context): the run exercised little (\(writers.map(\.acknowledged.count)) acked, \(writers.map(\.killed)) writers killed, \(kills) daemon kills)")

        try expectConverged([a, b], acknowledged: acknowledged, suite: Writer.suite, context: context)
    }

    @Test func killNineDuringACatchUp() throws {
        var random = SeededGenerator(seed: Self.seed &+ 1)
        let context = "crash seed \(Self.seed) (GROUPSYNC_CRASH_SEED=\(Self.seed) replays the schedule)"
        let folder = TemporaryFolder()
        let a = try TestDevice("a", in: folder), b = try TestDevice("b", in: folder)
        // a has a large history b has never seen: 20 000 entries of 300 bytes, written in one transaction.
        let count = 20_000
        do {
            let store = try Store(path: a.cli.home + "/store.db", device: try DeviceID(parsing: a.id))
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let origin = try DeviceID(parsing: a.id)
            let entries = (0..<count).map { i in
                Entry(suite: Writer.suite, key: "bulk\(i)", value: .string(String(repeating: "x", count: 300)),
                      version: Version(hlc: HLC(wallMillis: now, logical: UInt32(i)), origin: origin))
            }
            _ = try store.apply(entries)
        }
        try a.start()
        try b.start()
        // Kill b (the one catching up), sometimes a, when b's history reaches a random point of the catch-up.
        // The watch on b's progress starts before the pairing, so even a fast catch-up is caught mid-way.
        let progress = try Store(path: b.cli.home + "/store.db", device: try DeviceID(parsing: b.id))
        let paired = DispatchSemaphore(value: 0)
        let pairings = [(a.cli, b.id, b.address), (b.cli, a.id, a.address)]
        Thread.detachNewThread {
            for (cli, id, address) in pairings {
                if (try? cli.run("peer", "add", id, address))?.status != 0 { Issue.record("pairing failed") }
            }
            paired.signal()
        }
        defer { paired.wait() }
        var kills = 0, struckAt: [Int64] = []
        for _ in 0..<4 {
            let now = try progress.lastSequence()
            guard now < Int64(count) - 1 else { break }
            let threshold = now + 1 + Int64.random(in: 0...(Int64(count) - 2 - now) / 2, using: &random)
            let deadline = Date().addingTimeInterval(10)
            while try progress.lastSequence() < threshold, Date() < deadline { usleep(1000) }
            let victim = random.chance(0.7) ? b : a
            victim.stop(signal: SIGKILL)
            kills += 1
            struckAt.append(try progress.lastSequence())
            try victim.start()
        }
        print("catch-up kills struck with b holding \(struckAt) of \(count)")
        #expect(struckAt.contains { $0 > 0 && $0 < Int64(count) }, "\(context): no kill struck mid-catch-up (b held \(struckAt))")
        let keys = (0..<count).map { "bulk\($0)" }
        try expectConverged([a, b], acknowledged: keys, suite: Writer.suite, context: "\(context), \(kills) kills during the catch-up, b holding \(struckAt) of \(count)")
    }

    // MARK: Helpers

    /// Waits until every device lists every acknowledged key and all list the same keys, then checks the
    /// stores with SQLite's integrity check (daemons stopped first).
    private func expectConverged(_ devices: [TestDevice], acknowledged: [String], suite: String, context: String) throws {
        let deadline = Date().addingTimeInterval(20)
        var listings: [[String]] = []
        repeat {
            listings = try devices.map { try $0.cli.run("list", suite).lines.sorted() }
            if listings.allSatisfy({ $0 == listings[0] }) && Set(listings[0]).isSuperset(of: acknowledged) { break }
            Thread.sleep(forTimeInterval: 0.1)
        } while Date() < deadline
        for (device, listing) in zip(devices, listings) {
            let missing = Set(acknowledged).subtracting(listing)
            #expect(missing.isEmpty, "\(context): \(device.name) lacks \(missing.count) acknowledged writes, e.g. \(missing.sorted().prefix(5))\n\(device.log.suffix(3000))")
        }
        #expect(listings.allSatisfy { $0 == listings[0] }, "\(context): the devices did not converge: \(listings.map(\.count)) keys")
        for device in devices {
            #expect(device.stop() == 0, "\(context): \(device.name)'s daemon exits cleanly after all this")
            let store = try Store(path: device.cli.home + "/store.db", device: try DeviceID(parsing: device.id))
            #expect(try store.integrityCheck() == ["ok"], "\(context): \(device.name)")
            #expect(!device.log.contains("event=store-failed"), "\(context): \(device.name)")
        }
    }
}

/// Runs `groupsync set` in a loop on a background thread, killing some of them (SIGKILL) a random moment
/// after they start. A write counts as acknowledged only when `set` exited 0.
final class Writer: @unchecked Sendable {
    static let suite = "group.crash"
    let device: TestDevice
    let prefix: String
    private let lock = NSLock()
    private var random: SeededGenerator
    private var running = true
    private var acked: [String] = []
    private var kills = 0
    private let done = DispatchSemaphore(value: 0)

    init(device: TestDevice, prefix: String, seed: UInt64) {
        self.device = device
        self.prefix = prefix
        self.random = SeededGenerator(seed: seed)
    }

    var acknowledged: [String] { lock.withLock { acked } }
    var killed: Int { lock.withLock { kills } }

    func start() {
        Thread.detachNewThread { [self] in
            var i = 0
            while lock.withLock({ running }) {
                i += 1
                let key = "\(prefix)\(i)"
                guard let process = try? ChildProcess(GroupSyncBinary.path, ["--home", device.cli.home, "set", Self.suite, key, "value \(i)"]) else { continue }
                if random.chance(0.15) {
                    // Somewhere between start-up and the commit: the write may or may not be there.
                    usleep(UInt32.random(in: 0...15_000, using: &random))
                    process.signal(SIGKILL)
                    lock.withLock { kills += 1 }
                }
                if process.waitForExit(timeout: .seconds(60)) == .exited(0) { lock.withLock { acked.append(key) } }
            }
            done.signal()
        }
    }

    func stop() {
        lock.withLock { running = false }
        done.wait()
    }
}
