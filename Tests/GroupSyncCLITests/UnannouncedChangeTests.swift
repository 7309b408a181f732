import Foundation
import GroupSyncCore
import GroupSyncStore
import Testing

/// A change committed without its change signal, as when its writer is killed between the two (a review
/// under a debugger saw it missing on the peer after 3 s). A quiet link's keep-alive exchange makes the
/// session look at the store (what it holds back goes out then), so the change reaches the peer within one
/// keep-alive (30 s) rather than waiting for another change on the machine. A suite of its own, so that its
/// wait overlaps the others'.
@Suite struct UnannouncedChangeTests {
    @Test func aCommitWithoutItsSignalReachesThePeerAtTheNextKeepAlive() throws {
        let folder = TemporaryFolder()
        let (a, b) = try syncedPair(in: folder)
        // The store written directly, with no `didCommit`: nothing tells the daemon.
        let store = try Store(path: a.cli.home + "/store.db", device: try DeviceID(parsing: a.id))
        try store.set(.string("v"), suite: "group.test", key: "unannounced")
        let took = try b.await("unannounced", equals: "v", timeout: 45)
        #expect(took != nil, "never arrived\n\(a.log.suffix(1500))")
    }
}
