import Foundation
import Testing
@testable import GroupSyncStore

@Suite struct ChangeWatcherTests {
    @Test func aSignalWakesTheWatcherAndOtherFilesDoNot() throws {
        let folder = TemporaryFolder()
        let home = Home(path: folder.path)
        let watcher = try ChangeWatcher(home: home)
        #expect(watcher.wait(timeoutMillis: 50) == .timedOut)
        _ = FileManager.default.createFile(atPath: folder.path + "/unrelated", contents: Data("x".utf8))
        #expect(watcher.wait(timeoutMillis: 50) == .timedOut)
        ChangeSignal.post(home: home)
        #expect(watcher.wait(timeoutMillis: 1000) == .changed)
    }

    @Test func wakeUnblocksAWaitingThread() throws {
        let folder = TemporaryFolder()
        let watcher = try ChangeWatcher(home: Home(path: folder.path))
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { watcher.wake() }
        #expect(watcher.wait(timeoutMillis: 5000) == .woken)
    }
}

@Suite struct HomeTests {
    @Test func createdPrivateAndRefusedWhenReadableByOthers() throws {
        let folder = TemporaryFolder()
        let home = Home(path: folder.path + "/a/b")
        try home.create()
        let mode = try FileManager.default.attributesOfItem(atPath: home.path)[.posixPermissions] as! Int
        #expect(mode & 0o777 == 0o700)
        chmod(home.path, 0o755)
        #expect(throws: HomeError.self) { try home.checkPrivate() }
    }

    @Test func resolutionOrder() {
        #expect(Home.resolve(explicit: "/x", environment: ["GROUPSYNC_HOME": "/y"]).path == "/x")
        #expect(Home.resolve(explicit: nil, environment: ["GROUPSYNC_HOME": "/y", "XDG_DATA_HOME": "/z"]).path == "/y")
        #expect(Home.resolve(explicit: nil, environment: ["XDG_DATA_HOME": "/z"]).path == "/z/groupsync")
        #expect(Home.resolve(explicit: nil, environment: ["HOME": "/h"]).path == "/h/.local/share/groupsync")
    }
}
