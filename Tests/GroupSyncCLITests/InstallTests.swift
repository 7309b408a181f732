import Foundation
import GroupSyncCore
import GroupSyncTestSupport
import Testing

/// `make install`'s script (`Deploy/install.sh`) and the systemd user unit it installs: systemd reads the
/// unit without a complaint, its command line is the installed binary's daemon, that command starts one, and
/// SIGTERM (what systemd sends to stop it) ends it with exit 0. The unit's `RestartPreventExitStatus=2`
/// holds for a home never initialised.
@Suite struct InstallTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    private func installScript(_ arguments: String...) throws -> ChildProcess.Result {
        try ChildProcess.run("/bin/bash", [Self.root + "/Deploy/install.sh"] + arguments, stderr: .pipe)
    }

    @Test func theInstalledUnitStartsTheInstalledDaemonAndSIGTERMStopsItCleanly() throws {
        let folder = TemporaryFolder()
        // A space, & and | (which a sed replacement misread) and % (a systemd specifier) in the path, found by review.
        let prefix = folder.path + "/my prefix & a|b 50%off"
        let installed = try installScript("install", GroupSyncBinary.path, prefix)
        #expect(installed.status == 0, "\(installed.errors)")
        let binary = prefix + "/bin/groupsync", unitPath = prefix + "/lib/systemd/user/groupsync.service"
        // A prefix the user's systemd does not search: the install says how to make the unit found.
        #expect(installed.output.contains("run 'systemctl --user link \(unitPath)' before enabling it"), "\(installed.output)")
        #expect(FileManager.default.isExecutableFile(atPath: binary))
        let unit = try String(contentsOfFile: unitPath, encoding: .utf8)
        let execStart = try #require(unit.split(separator: "\n").first { $0.hasPrefix("ExecStart=") }).dropFirst("ExecStart=".count)
        #expect(execStart == "\"\(binary.replacingOccurrences(of: "%", with: "%%"))\" serve")

        // systemd's own reading of the unit where it lies. It exits 0 even for a key or value it ignores, and
        // says so on stderr: both must be quiet.
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") {
            let verified = try ChildProcess.run("/usr/bin/systemd-analyze", ["verify", unitPath], stderr: .pipe)
            #expect(verified.status == 0 && verified.errors.isEmpty, "\(verified.errors)")
        } else {
            print("skipped systemd-analyze verify: systemd is not installed")
        }

        // The unit's command as systemd runs it (the quoted path unquoted, %% read as %, the rest split on
        // spaces, no shell), in an initialised home; a free port, as the default 22100 may be taken on a test machine.
        let home = folder.path + "/home"
        let cli = GroupSyncBinary(home: home)
        #expect(try cli.run(["init", "--name", "installed"], executable: binary).status == 0)
        let quoted = execStart.dropFirst().prefix { $0 != "\"" }
        let words = [quoted.replacingOccurrences(of: "%%", with: "%")] + execStart.dropFirst(quoted.count + 2).split(separator: " ").map(String.init)
        #expect(words[0] == binary)
        let environment = ProcessInfo.processInfo.environment.merging(["GROUPSYNC_HOME": home]) { $1 }
        let daemon = try ChildProcess(words[0], Array(words.dropFirst()) + ["--listen", "127.0.0.1:0"], environment: environment)
        let deadline = Date().addingTimeInterval(10)
        var running = false
        while !running, Date() < deadline {
            running = try cli.run(["status", "--json"], executable: binary).stdout.contains(#""running":true"#)
            if !running { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(running, "the unit's command runs the daemon")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: .seconds(30)) == .exited(0), "SIGTERM ends it cleanly, so systemd does not restart it")

        // A home never initialised: exit 2, which the unit does not restart.
        let uninitialised = try ChildProcess.run(binary, ["serve", "--listen", "127.0.0.1:0"],
                                                 environment: environment.merging(["GROUPSYNC_HOME": folder.path + "/none"]) { $1 }, stderr: .pipe)
        #expect(uninitialised.status == 2 && uninitialised.errors.contains("groupsync init"), "\(uninitialised.errors)")
        #expect(unit.contains("\nRestartPreventExitStatus=2\n"))

        let removed = try installScript("uninstall", prefix)
        #expect(removed.status == 0, "\(removed.errors)")
        #expect(!FileManager.default.fileExists(atPath: binary) && !FileManager.default.fileExists(atPath: unitPath))
    }

    @Test func theScriptRefusesWhatItCannotInstall() throws {
        let folder = TemporaryFolder()
        // systemd runs no binary whose path holds a quote or a backslash.
        for arguments in [["install"], ["install", folder.path + "/missing", folder.path], ["install", GroupSyncBinary.path, "relative/prefix"], ["frobnicate"],
                          ["install", GroupSyncBinary.path, folder.path + "/\"quoted\""], ["install", GroupSyncBinary.path, folder.path + "/back\\slash"]] {
            let refused = try ChildProcess.run("/bin/bash", [Self.root + "/Deploy/install.sh"] + arguments, stderr: .pipe)
            #expect(refused.status == 2 && !refused.errors.isEmpty, "\(arguments): \(refused.errors)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty, "nothing installed")
    }
}
