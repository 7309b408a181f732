import Foundation
import GroupSyncCore
import GroupSyncStore
import GroupSyncTestSupport
import Testing

@Suite struct CommandLineTests {
    let folder = TemporaryFolder()
    var home: String { folder.path + "/home" }
    var cli: GroupSyncBinary { GroupSyncBinary(home: home) }

    /// Found by review: a standard descriptor left closed by the caller was taken by a file of the home, and
    /// what was meant for it written there: `status >&-` put its report in the store's writer lock file, and
    /// `serve 2>&-` its whole log.
    @Test func closedStandardDescriptorsAreNotWrittenIntoTheHome() throws {
        try cli.run("init")
        let environment = ProcessInfo.processInfo.environment.merging(["GROUPSYNC_HOME": home]) { $1 }
        let status = try ChildProcess.run("/bin/sh", ["-c", #"exec "$0" status >&-"#, GroupSyncBinary.path], environment: environment)
        #expect(status.status == 0)
        let serve = try ChildProcess("/bin/sh", ["-c", #"exec "$0" serve --listen 127.0.0.1:0 2>&-"#, GroupSyncBinary.path], environment: environment)
        let deadline = Date().addingTimeInterval(10)
        while try !cli.run("status").stdout.contains("running, listening"), Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        try cli.run("set", "s", "k", "v")
        #expect(serve.terminate() == .exited(0))
        let files = try FileManager.default.contentsOfDirectory(atPath: home)
        for file in files where !file.hasPrefix("store.db") || file.hasSuffix("-writer") {
            let text = (try? String(contentsOfFile: home + "/" + file, encoding: .utf8)) ?? ""
            #expect(!text.contains("device ") && !text.contains("event="), "\(file) holds output: \(text.prefix(200))")
        }
    }

    @Test func everyCommandHasHelp() throws {
        let overview = try cli.run("--help")
        #expect(overview.status == 0)
        for name in ["init", "id", "set", "get", "delete", "list", "watch", "simulate"] {
            #expect(overview.stdout.contains("  \(name) "), "overview lists \(name)")
            let help = try cli.run(name, "--help")
            #expect(help.status == 0, "\(name) --help")
            #expect(help.stdout.contains("usage: groupsync \(name)"), "\(name) --help shows its usage")
            let topic = try cli.run("help", name)
            #expect(topic.status == 0 && topic.stdout == help.stdout, "help \(name) is \(name) --help")
        }
        let unknown = try cli.run("help", "sett")
        #expect(unknown.status == 2 && unknown.stderr.contains("unknown command 'sett'") && unknown.stdout.isEmpty)
    }

    /// Output that cannot be written is a failure (exit 3, said on stderr), not a success: a script must not
    /// take a `get` whose value it never received for one that worked. A reader that went away (EPIPE) is
    /// not: `watch | head -1` ends with 0 (found by review: `get > /dev/full` exited 0).
    @Test func outputThatCannotBeWrittenFailsWithExit3() throws {
        try cli.run("init")
        try cli.run("set", "s", "k", "v")
        let environment = ProcessInfo.processInfo.environment.merging(["BIN": GroupSyncBinary.path, "GROUPSYNC_HOME": home]) { $1 }
        let full = try ChildProcess.run("/bin/bash", ["-c", #""$BIN" get s k > /dev/full; echo "exit $?""#], environment: environment, stderr: .pipe)
        #expect(full.output == "exit 3\n" && full.errors.contains("cannot write its output: No space left on device"), "\(full.output) \(full.errors)")
        let closed = try ChildProcess.run("/bin/bash", ["-c", #""$BIN" get s k | true; echo "exit ${PIPESTATUS[0]}""#], environment: environment, stderr: .pipe)
        #expect(closed.output == "exit 0\n" && closed.errors.isEmpty, "\(closed.output) \(closed.errors)")
        // watch, once a change comes.
        let watching = try ChildProcess("/bin/bash", ["-c", #""$BIN" watch s > /dev/full"#], environment: environment, stderr: .pipe)
        Thread.sleep(forTimeInterval: 0.3)
        try cli.run("set", "s", "k", "w")
        #expect(watching.waitForExit(timeout: .seconds(5)) == .exited(3))
    }

    /// A store whose clock a write made while the wall clock was 2 h ahead moved there: later writes are
    /// stamped from it and peers refuse them for those 2 h (RELIABILITY.md, known limitation 7). `set` and
    /// `delete` still succeed, and say so on stderr; a write on a clock in step says nothing.
    @Test func aWriteStampedFarAheadOfTheClockIsReported() throws {
        let id = try #require(try cli.run("init").lines.first)
        #expect(try cli.run("set", "s", "k", "v").stderr.isEmpty)
        let twoHours: Int64 = 7_200_000
        do {
            let glitched = try Store(path: home + "/store.db", device: try DeviceID(parsing: id),
                                     physicalClock: { WallClock.nowMillis() + twoHours })
            try glitched.set(.string("written while the clock was ahead"), suite: "s", key: "glitch")
        }
        for arguments in [["set", "s", "k", "later"], ["delete", "s", "k"]] {
            let result = try cli.run(arguments)
            #expect(result.status == 0)
            #expect(result.stderr.contains("warning: this write is stamped 7") && result.stderr.contains("s ahead of this device's clock"), "\(result.stderr)")
        }
        #expect(try cli.run("get", "s", "k").status == 1, "deleted, as asked")
    }

    @Test func initMakesAPrivateHomeAndASecondInitKeepsTheIdentity() throws {
        let first = try cli.run("init", "--name", "laptop")
        #expect(first.status == 0)
        let id = try #require(first.lines.first)
        #expect(try DeviceID(parsing: id).description == id)
        let second = try cli.run("init")
        #expect(second.lines.first == id)
        #expect(try cli.run("id").lines.first == id)
        try cli.run("set", "s", "k", "v")
        let attributes = try FileManager.default.attributesOfItem(atPath: home)
        #expect((attributes[.posixPermissions] as! Int) & 0o777 == 0o700)
        for file in try FileManager.default.contentsOfDirectory(atPath: home) {
            let mode = try FileManager.default.attributesOfItem(atPath: home + "/" + file)[.posixPermissions] as! Int
            #expect(mode & 0o077 == 0, "\(file) has mode \(String(mode, radix: 8))")
        }
        // The device ID is the SHA-256 fingerprint of the certificate, as openssl computes it.
        let hex = try ChildProcess.run("/usr/bin/openssl", ["x509", "-in", home + "/cert.pem", "-noout", "-fingerprint", "-sha256"]).output
            .split(separator: "=").last!.split(separator: ":").map { UInt8($0.trimmingCharacters(in: .whitespacesAndNewlines), radix: 16)! }
        #expect(try DeviceID(bytes: hex).description == id)
    }

    @Test func valuesKeepTheirTypes() throws {
        try cli.run("init")
        let cases: [([String], String, String)] = [
            (["hello world"], "string", "\"hello world\""),
            (["--int", "-5"], "int", "-5"),
            (["--double", "0.25"], "double", "0.25"),
            (["--double", "7"], "double", "7.0"),
            (["--bool", "true"], "bool", "true"),
            (["--date", "2026-11-29T14:15:00.25+01:00"], "date", "\"2026-11-29T13:15:00.250Z\""),
            (["--data", "aGVsbG8="], "data", "\"aGVsbG8=\""),
            (["--json", #"[{"type":"blockSelection","n":7.0,"m":7}]"#], "array", #"[{"m":7,"n":7.0,"type":"blockSelection"}]"#),
            (["--json", #"{"payload":{"title":"Time's up"},"minIntervalSeconds":30}"#], "dictionary", #"{"minIntervalSeconds":30,"payload":{"title":"Time's up"}}"#),
        ]
        for (index, (arguments, type, json)) in cases.enumerated() {
            let set = try cli.run(["set", "group.test", "k\(index)"] + arguments)
            #expect(set.status == 0, "set \(arguments): \(set.stderr)")
            let get = try cli.run("get", "--json", "group.test", "k\(index)")
            #expect(get.stdout.contains(#""type":"\#(type)","value":\#(json),"#), "\(get.stdout)")
            #expect(get.stdout.contains(#""suite":"group.test","key":"k\#(index)""#))
            #expect(get.stdout.contains(#""hlc":""#) && get.stdout.contains(#""origin":""#))
        }
        #expect(try cli.run("get", "group.test", "k0").stdout == "hello world\n")
        #expect(try cli.run("get", "group.test", "k3").stdout == "7.0\n")
        #expect(try cli.run("get", "group.test", "k5").stdout == "2026-11-29T13:15:00.250Z\n")
        #expect(try cli.run("get", "group.test", "k6").stdout == "aGVsbG8=\n")
        #expect(try cli.run("list", "group.test").lines == (0..<cases.count).map { "k\($0)" })
        #expect(try cli.run("list", "--json", "group.test").lines.count == cases.count)
    }

    @Test func deleteAndMissingKeys() throws {
        try cli.run("init")
        #expect(try cli.run("get", "s", "nope").status == 1)
        #expect(try cli.run("delete", "s", "nope").status == 1)
        try cli.run("set", "s", "k", "v")
        #expect(try cli.run("delete", "s", "k").status == 0)
        #expect(try cli.run("get", "s", "k").status == 1)
        #expect(try cli.run("list", "s").stdout.isEmpty)
        #expect(try cli.run("set", "s", "k", "back").status == 0)
        #expect(try cli.run("get", "s", "k").stdout == "back\n")
    }

    @Test func anUninitializedHomeIsAClearError() throws {
        let result = try cli.run("get", "s", "k")
        #expect(result.status == 2)
        #expect(result.stderr.contains("groupsync init"))
        #expect(!FileManager.default.fileExists(atPath: home))
    }
}
