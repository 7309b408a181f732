import Foundation
import GroupSyncCore
import GroupSyncTestSupport
import Testing

@Suite struct CommandLineTests {
    let folder = TemporaryFolder()
    var home: String { folder.path + "/home" }
    var cli: GroupSyncBinary { GroupSyncBinary(home: home) }

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
