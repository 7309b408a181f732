import Foundation
import Synchronization
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
        ChangeSignal(home: home).post()
        #expect(watcher.wait(timeoutMillis: 1000) == .changed)
    }

    /// The store's own log lives in the home and is written at every commit: writing it wakes no one.
    /// A signal that reaches no watcher says why, to whoever asked (the daemon logs it), instead of nothing.
    @Test func aSignalThatCannotBeMadeSaysWhy() throws {
        let folder = TemporaryFolder()
        let problems = Mutex<[String]>([])
        let signal = ChangeSignal(home: Home(path: folder.path + "/gone/home")) { problem in problems.withLock { $0.append(problem) } }
        signal.openNow()
        signal.post()
        let said = problems.withLock { $0 }
        #expect(said.count == 2 && said.allSatisfy { $0.contains("gone/home/signal") && $0.contains("No such file or directory") }, "\(said)")
    }

    @Test func writesToTheHomesOtherFilesDoNotWakeIt() throws {
        let folder = TemporaryFolder()
        let home = Home(path: folder.path)
        let logPath = folder.path + "/store.db-wal"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try #require(FileHandle(forWritingAtPath: logPath))
        let watcher = try ChangeWatcher(home: home)
        log.write(Data("frame".utf8))
        try log.synchronize()
        #expect(watcher.wait(timeoutMillis: 50) == .timedOut)
        try log.close()
    }

    /// A writer keeps its signal file open: every post wakes the watcher, not only the first.
    @Test func aKeptSignalWakesTheWatcherEveryTime() throws {
        let folder = TemporaryFolder()
        let home = Home(path: folder.path)
        let watcher = try ChangeWatcher(home: home)
        let signal = ChangeSignal(home: home)
        for _ in 0..<3 {
            signal.post()
            #expect(watcher.wait(timeoutMillis: 1000) == .changed)
            #expect(watcher.wait(timeoutMillis: 20) == .timedOut)
        }
        let mode = try FileManager.default.attributesOfItem(atPath: home.changeSignalFolder)[.posixPermissions] as! Int
        #expect(mode & 0o777 == 0o700)
    }

    @Test func wakeUnblocksAWaitingThread() throws {
        let folder = TemporaryFolder()
        let watcher = try ChangeWatcher(home: Home(path: folder.path))
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { watcher.wake() }
        #expect(watcher.wait(timeoutMillis: 5000) == .woken)
    }

    /// A nudge reads as a change to the thread it wakes, and to no other watcher; a stop beside it still stops.
    @Test func aNudgeReadsAsAChangeAndAStopStillStops() throws {
        let folder = TemporaryFolder()
        let watcher = try ChangeWatcher(home: Home(path: folder.path)), other = try ChangeWatcher(home: Home(path: folder.path))
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { watcher.nudge() }
        #expect(watcher.wait(timeoutMillis: 5000) == .changed)
        #expect(other.wait(timeoutMillis: 100) == .timedOut)
        watcher.nudge()
        watcher.wake()
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

    @Test func resolutionOrder() throws {
        #expect(Home.resolve(explicit: "/x", environment: ["GROUPSYNC_HOME": "/y"])?.path == "/x")
        #expect(Home.resolve(explicit: nil, environment: ["GROUPSYNC_HOME": "/y", "XDG_DATA_HOME": "/z"])?.path == "/y")
        #expect(Home.resolve(explicit: nil, environment: ["XDG_DATA_HOME": "/z"])?.path == "/z/groupsync")
        #expect(Home.resolve(explicit: nil, environment: ["HOME": "/h"])?.path == "/h/.local/share/groupsync")
        // Without HOME, the user's home directory from the password database, never a shared folder like /tmp.
        let fromPasswd = try #require(Home.resolve(explicit: nil, environment: [:])).path
        #expect(fromPasswd == String(cString: getpwuid(geteuid())!.pointee.pw_dir) + "/.local/share/groupsync")
        #expect(!fromPasswd.hasPrefix("/tmp"))
    }
}
