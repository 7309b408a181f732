import Foundation
import Testing
import GroupSyncCore
import GroupSyncStore

/// Two devices with real daemons block different selections while apart: after they meet again, both
/// devices' `blockedSelectionIds` name both blocks (a list merged last-writer-wins alone would keep one).
@Suite(.serialized) struct BlockReplicationTests {
    let suite = "group.com.example.blocker"

    @Test func blocksMadeOnTwoDevicesApartAreBothInTheListAfterTheyMeet() throws {
        let folder = TemporaryFolder()
        let a = try TestDevice("a", in: folder), b = try TestDevice("b", in: folder)
        for device in [a, b] { try device.start() }
        try pairAll([a, b])
        try a.cli.run("set", suite, "familyActivitySelectionIds", "--json", #"{"social":"opaque","games":"opaque"}"#)
        try a.cli.run("set", suite, "actions_for_evening_intervalDidStart", "--json", #"[{"type":"blockSelection","familyActivitySelectionId":"social"}]"#)
        try a.cli.run("set", suite, "actions_for_weekend_intervalDidStart", "--json", #"[{"type":"blockSelection","familyActivitySelectionId":"games"}]"#)
        #expect(try b.await("actions_for_weekend_intervalDidStart", equals: #"[{"familyActivitySelectionId":"games","type":"blockSelection"}]"#, suite: suite) != nil)

        b.stop()
        let onA = try a.cli.run("fire", "--suite", suite, "--activity", "evening", "--callback", "intervalDidStart")
        #expect(onA.status == 0, "\(onA.stderr)")
        // b's list is written later, so a list merged on its own would be b's: games only.
        let onB = try b.cli.run("fire", "--suite", suite, "--activity", "weekend", "--callback", "intervalDidStart")
        #expect(onB.status == 0, "\(onB.stderr)")
        #expect(try b.get("blockedSelectionIds", suite: suite) == #"["games"]"#)
        try b.start()

        for device in [a, b] {
            let both = try device.await("blockedSelectionIds", equals: #"["games","social"]"#, suite: suite, timeout: 10)
            let list = try device.get("blockedSelectionIds", suite: suite)
            #expect(both != nil, "\(device.name): \(list ?? "no list")\n\(device.log)")
            #expect(try device.get("groupsync.block.social", suite: suite) == "true")
            #expect(try device.get("groupsync.block.games", suite: suite) == "true")
        }
        #expect((a.log + b.log).contains("event=blocks-reconciled"))
    }

    /// A device catching up on many blocks derives the list after each batch, so what it writes on the way is
    /// partial and reaches its peers at once; killed right then, it leaves that list behind. So a daemon derives
    /// the list again when the list itself changes (a peer's partial one arrived: here, written by another
    /// process) and once when it starts (it may be the one that was killed), not only when keys change.
    @Test func aListThatDisagreesWithTheKeysIsDerivedAgainWhenItChangesAndAtStart() throws {
        let folder = TemporaryFolder()
        let a = try TestDevice("a", in: folder)
        let store = try Store(path: a.cli.home + "/store.db", device: try DeviceID(parsing: a.id))
        let ids = ["games", "news", "social"]
        _ = try store.write(ids.map { .set(suite: suite, key: SelectionBlocks.key($0), value: .bool(true)) }
                            + [.set(suite: suite, key: "blockedSelectionIds", value: .array([.string("games")]))])
        let full = #"["games","news","social"]"#
        try a.start()
        #expect(try a.await("blockedSelectionIds", equals: full, suite: suite, timeout: 5) != nil, "derived at start\n\(a.log)")
        for partial in [#"["news"]"#, #"["games","news"]"#] {
            try a.cli.run("set", suite, "blockedSelectionIds", "--json", partial)
            #expect(try a.await("blockedSelectionIds", equals: full, suite: suite, timeout: 5) != nil, "derived again when the list changed\n\(a.log)")
        }
    }
}
