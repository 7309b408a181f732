/// One kind of local operation the simulator draws — key-value writes, balance operations — together with the
/// invariants that kind promises.
///
/// A workload is told about every operation it performs and checks its own guarantees: while the run goes
/// on (`observe`, after each event that changed a replica's store) and once every replica has converged
/// (`verify`). It writes only through the replica's store, as the real app writes through the SQLite
/// store, so replication carries its data like any other.
public protocol SimulationWorkload: AnyObject {
    /// A short name for reports ("kv", "balance").
    var name: String { get }
    /// How often this workload is picked, relative to the others.
    var weight: Int { get }
    /// Performs one random operation on `replica` (up, and its apps able to write). Returns a line for the
    /// trace, or `nil` when it chose to do nothing. What returns is acknowledged: it is in the store.
    func perform(on replica: SimulatedReplica, random: inout SeededGenerator) -> String?
    /// Invariants that must hold at every moment, on every replica; called after each event that changed
    /// `replica`'s store. Returns the violations (empty when fine).
    func observe(_ replica: SimulatedReplica) -> [String]
    /// `replica`'s store was moved aside and replaced by an empty one (its peers held everything in it).
    func storeWasReset(_ replica: SimulatedReplica)
    /// A power cut struck the operation just performed on `replica` after it was visible, before it was
    /// durable: it was never acknowledged. Returns false for a workload whose operations cannot be caught
    /// so (they commit synced, as `Store.update` does), and the simulator then leaves them alone.
    func lastOperationWasLost(on replica: SimulatedReplica) -> Bool
    /// Invariants of the converged state (every replica up, the network quiet and every store equal).
    func verify(_ replicas: [SimulatedReplica]) -> [String]
}

extension SimulationWorkload {
    public func observe(_ replica: SimulatedReplica) -> [String] { [] }
    public func storeWasReset(_ replica: SimulatedReplica) {}
    public func lastOperationWasLost(on replica: SimulatedReplica) -> Bool { false }
}

/// The workloads a standard run uses, made fresh for each seed.
public enum SimulationWorkloads {
    public static func standard() -> [any SimulationWorkload] {
        [
            KeyValueWorkload(),
            BalanceWorkload(),
            UsageWorkload(),
        ]
    }
}
