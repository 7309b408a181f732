import GroupSyncCore
import GroupSyncStore

/// Says so on stderr when a write of this command is stamped further ahead of this device's clock than
/// peers accept by default: a write made earlier while the clock was ahead set the store's hybrid clock
/// there, and peers refuse what is stamped from it until their clocks reach the stamp (RELIABILITY.md,
/// known limitation 7). The write itself succeeded; without this the device showed nothing (found by
/// review: only the receiving peer's log said why the writes never arrived).
enum ClockAheadWarning {
    static func check(_ change: Change?, command: String) {
        guard let stamp = change?.entry.version.hlc.wallMillis else { return }
        let ahead = stamp - WallClock.nowMillis()
        guard ahead > HybridClock.defaultMaxForwardDriftMillis else { return }
        Console.error("groupsync \(command): warning: this write is stamped \(ahead / 1000) s ahead of this device's clock, "
            + "because a write made while the clock was ahead moved the store's clock there; paired devices take it "
            + "only once their clocks reach \(ISO8601.format(secondsSince1970: Double(stamp) / 1000))")
    }
}
