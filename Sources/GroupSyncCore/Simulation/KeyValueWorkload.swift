/// Sets and deletes of typed values on a few hot keys of a few suites, so replicas write the same keys
/// concurrently all the time.
///
/// Promises checked: every key's winner on every replica is the write with the greatest (hlc, origin) among
/// all acknowledged writes of it (so no acknowledged write is lost to an older one, and no deleted key comes
/// back), values arrive bit-exact, and no replica holds a key nobody wrote. A write lost to a power cut
/// after it became visible was never acknowledged: it may win instead, if a peer read it before the cut and
/// so kept it, but then it must win everywhere.
public final class KeyValueWorkload: SimulationWorkload {
    public let name = "kv"
    public let weight: Int
    let suites: [String]
    let keys: [String]
    /// Every acknowledged write of each key.
    private var writes: [KeyPath: [Write]] = [:]
    /// Writes lost by their device to a power cut after they became visible (never acknowledged).
    private var lostWrites: [KeyPath: [Write]] = [:]
    /// The last write performed, and what its device's `latestLocal` held for the key before it. Only a write
    /// ticked on its device's clock time is visible before it is durable: one ticked ahead of that clock is
    /// synced first (`Store.write`), so no power cut can take it once anyone could read it.
    private var lastWrite: (replica: Int, path: KeyPath, previous: Version?, visibleFirst: Bool)?
    private var keyOrder: [KeyPath] = []
    /// Per replica, the latest acknowledged local write of each key it wrote: the store must never hold
    /// less, crash or not.
    private var latestLocal: [Int: [KeyPath: Version]] = [:]
    /// Writes lost by their device after they became visible that a peer kept, so that they won everywhere
    /// (counted by `verify`).
    public private(set) var lostWritesThatSurvived = 0
    public private(set) var sets = 0
    public private(set) var deletes = 0

    struct KeyPath: Hashable {
        var suite: String
        var key: String
    }

    struct Write {
        var version: Version
        var value: Value?
    }

    public init(weight: Int = 10, suites: Int = 2, keysPerSuite: Int = 8) {
        self.weight = weight
        self.suites = (0..<suites).map { "group.sim\($0)" }
        self.keys = (0..<keysPerSuite).map { "k\($0)" }
    }

    public func perform(on replica: SimulatedReplica, random: inout SeededGenerator) -> String? {
        lastWrite = nil
        let path = KeyPath(suite: suites.randomElement(using: &random)!, key: keys.randomElement(using: &random)!)
        let change: Change?
        if random.chance(0.3) {
            change = replica.store.delete(suite: path.suite, key: path.key, physicalMillis: replica.physicalMillis)
            if change != nil { deletes += 1 }
        } else {
            change = replica.store.set(Self.randomValue(&random), suite: path.suite, key: path.key, physicalMillis: replica.physicalMillis)
            sets += 1
        }
        guard let change else { return nil }
        lastWrite = (replica.index, path, latestLocal[replica.index]?[path], change.entry.version.hlc.wallMillis <= replica.physicalMillis)
        if writes[path] == nil && lostWrites[path] == nil { keyOrder.append(path) }
        writes[path, default: []].append(Write(version: change.entry.version, value: change.entry.value))
        latestLocal[replica.index, default: [:]][path] = change.entry.version
        return "\(change.entry.isDeleted ? "delete" : "set") \(path.suite)/\(path.key) hlc=\(change.entry.version.hlc)"
    }

    public func observe(_ replica: SimulatedReplica) -> [String] {
        var problems: [String] = []
        for (path, version) in latestLocal[replica.index] ?? [:] {
            let held = replica.store.entry(suite: path.suite, key: path.key)
            if held == nil || held!.version < version {
                problems.append("its acknowledged write of \(path.suite)/\(path.key) at \(version.hlc) is gone (holds \(held.map { "\($0.version.hlc)" } ?? "nothing"))")
            }
        }
        return problems.sorted()
    }

    /// The replica's own writes now live only in its peers' stores (and come back from there).
    public func storeWasReset(_ replica: SimulatedReplica) { latestLocal[replica.index] = nil }

    public func lastOperationWasLost(on replica: SimulatedReplica) -> Bool {
        guard let last = lastWrite, last.replica == replica.index, last.visibleFirst, let write = writes[last.path]?.popLast() else { return false }
        lastWrite = nil
        if writes[last.path]!.isEmpty { writes[last.path] = nil }
        lostWrites[last.path, default: []].append(write)
        latestLocal[replica.index]?[last.path] = last.previous
        return true
    }

    public func verify(_ replicas: [SimulatedReplica]) -> [String] {
        var problems: [String] = []
        for path in keyOrder {
            let acknowledged = writes[path] ?? []
            let winner = acknowledged.max { $0.version < $1.version }
            // Lost writes newer than every acknowledged one may have survived through a peer.
            let survivors = (lostWrites[path] ?? []).filter { lost in winner.map { lost.version > $0.version } ?? true }
            if let first = replicas.first?.store.entry(suite: path.suite, key: path.key), survivors.contains(where: { $0.version == first.version }) {
                lostWritesThatSurvived += 1
            }
            for replica in replicas {
                let held = replica.store.entry(suite: path.suite, key: path.key)
                // Bit-exact: `==` on doubles would let -0.0 pass for 0.0.
                let isHeld = { (write: Write) in held?.version == write.version && held?.value.map(ValueCodec.encode) == write.value.map(ValueCodec.encode) }
                if survivors.contains(where: isHeld) { continue }
                guard let winner else {
                    if let held { problems.append("\(replica.name) holds \(path.suite)/\(path.key) at \(held.version.hlc), which matches no write of it (all were lost)") }
                    continue
                }
                guard let held else {
                    problems.append("\(replica.name) lacks \(path.suite)/\(path.key) (written \(acknowledged.count) times)")
                    continue
                }
                if isHeld(winner) { continue }
                if winner.value == nil && held.value != nil {
                    problems.append("\(path.suite)/\(path.key) was deleted at \(winner.version.hlc) but came back on \(replica.name) with version \(held.version.hlc)")
                } else {
                    problems.append("\(replica.name) holds \(path.suite)/\(path.key) at \(held.version.hlc) (\(held.value.map { "\($0)" } ?? "deleted")), but the greatest acknowledged write is \(winner.version.hlc) (\(winner.value.map { "\($0)" } ?? "deleted"))")
                }
            }
        }
        for replica in replicas {
            // Only this workload's suites: other workloads (the balance) write suites of their own.
            for entry in replica.store.entries where suites.contains(entry.suite) && writes[KeyPath(suite: entry.suite, key: entry.key)] == nil
                && lostWrites[KeyPath(suite: entry.suite, key: entry.key)] == nil {
                problems.append("\(replica.name) holds \(entry.suite)/\(entry.key), which nobody wrote")
            }
        }
        return problems
    }

    /// A value of any type, small, including the ones that are easy to get wrong on the wire: `-0.0`,
    /// `0.25`, non-ASCII strings, nested containers.
    static func randomValue(_ random: inout SeededGenerator) -> Value {
        switch Int.random(in: 0..<10, using: &random) {
        case 0, 1, 2: .int(Int64.random(in: -1_000...1_000, using: &random))
        case 3: .double([0.25, -0.0, 7.0, 1e-300, Double.random(in: -1e6...1e6, using: &random)].randomElement(using: &random)!)
        case 4: .string(["", "x", "é✓ 日本", "Time's up", String(repeating: "a", count: Int.random(in: 1...200, using: &random))].randomElement(using: &random)!)
        case 5: .bool(Bool.random(using: &random))
        case 6: .date(Double(Int64.random(in: 1_600_000_000...1_900_000_000, using: &random)) + 0.5)
        case 7: .data((0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        case 8: .array([.int(1), .string("two"), .array([.bool(true)])])
        default: .dictionary(["type": .string("blockSelection"), "minutes": .int(Int64.random(in: 0...120, using: &random)), "nested": .dictionary(["ok": .bool(true)])])
        }
    }
}
