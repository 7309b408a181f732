import Foundation
import Testing
import GroupSyncCore
import GroupSyncStore

/// Bad input is part of the contract: exit 2, one line on stderr naming the problem, nothing written.
@Suite struct BadInputTests {
    static let badInvocations: [[String]] = [
        ["set"], ["set", "s"], ["set", "s", "k"], ["set", "s", "k", "v", "extra"],
        ["set", "s", "k", "--int", "1.5"], ["set", "s", "k", "--int", "9223372036854775808"], ["set", "s", "k", "--int", ""],
        ["set", "s", "k", "--double", "abc"], ["set", "s", "k", "--double", "nan"], ["set", "s", "k", "--double", "inf"],
        ["set", "s", "k", "--bool", "maybe"], ["set", "s", "k", "--date", "yesterday"], ["set", "s", "k", "--data", "!!!"],
        ["set", "s", "k", "--json", "{"], ["set", "s", "k", "--json", "null"], ["set", "s", "k", "--json", "[1,]"],
        ["set", "s", "k", "--int", "1", "--double", "2"], ["set", "s", "k", "v", "--int", "3"],
        ["set", "", "k", "v"], ["set", "s", "", "v"], ["set", "s", "a\u{1}b", "v"],
        ["set", "s", "k", "v", "--frobnicate"], ["get", "s"], ["get", "s", "k", "x"], ["delete"], ["list"],
        ["watch"], ["frob"], ["init", "--name", ""], ["id", "extra"], ["get", "--int", "s", "k"],
    ]

    @Test func badInputExitsTwoAndWritesNothing() throws {
        let folder = TemporaryFolder()
        let cli = GroupSyncBinary(home: folder.path + "/home")
        try cli.run("init")
        try cli.run("set", "s", "k", "original")
        let before = try storeSequence(home: cli.home)
        for arguments in Self.badInvocations {
            let result = try cli.run(arguments)
            #expect(result.status == 2, "\(arguments) exited \(result.status)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].count > 10, "\(arguments) should explain itself in one line: \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(arguments)")
        }
        #expect(try storeSequence(home: cli.home) == before)
        #expect(try cli.run("get", "s", "k").stdout == "original\n")
    }

    @Test func aDamagedStoreIsNamedAndLeftAlone() throws {
        let folder = TemporaryFolder()
        let cli = GroupSyncBinary(home: folder.path + "/home")
        try cli.run("init")
        let storePath = cli.home + "/store.db"
        try Data(repeating: 0x42, count: 8192).write(to: URL(fileURLWithPath: storePath))
        let result = try cli.run("set", "s", "k", "v")
        #expect(result.status == 3)
        #expect(result.stderr.contains(storePath))
        #expect(try Data(contentsOf: URL(fileURLWithPath: storePath)) == Data(repeating: 0x42, count: 8192))
    }

    @Test func aDamagedKeyFileIsNamed() throws {
        let folder = TemporaryFolder()
        let cli = GroupSyncBinary(home: folder.path + "/home")
        try cli.run("init")
        let keyPath = cli.home + "/key.pem"
        let key = try String(contentsOfFile: keyPath, encoding: .utf8)
        try String(key.prefix(40)).write(toFile: keyPath, atomically: false, encoding: .utf8)
        let result = try cli.run("get", "s", "k")
        #expect(result.status == 3)
        #expect(result.stderr.contains("key.pem"))
        #expect(try cli.run("init").status == 3)  // never silently replaced by a new identity
    }

    @Test func aHomeReadableByOthersIsRefused() throws {
        let folder = TemporaryFolder()
        let cli = GroupSyncBinary(home: folder.path + "/home")
        try cli.run("init")
        chmod(cli.home, 0o755)
        let result = try cli.run("set", "s", "k", "v")
        #expect(result.status == 3)
        #expect(result.stderr.contains("chmod 700"))
    }

    private func storeSequence(home: String) throws -> Int64 {
        let store = try Store(path: home + "/store.db", device: try DeviceID(bytes: Array(repeating: 0, count: 32)))
        return try store.lastSequence()
    }
}
