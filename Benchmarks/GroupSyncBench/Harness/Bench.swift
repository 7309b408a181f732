import Foundation

/// What every workload needs: the options, the binary under test, a scratch folder, the results, and the
/// peers that could be had on this machine.
final class Bench {
    let options: Options
    let binary: String
    let folder: TemporaryFolder
    let results = Results()
    let yjs: YjsPeer?
    let redisAvailable: Bool
    private var serial = 0

    init(options: Options) throws {
        self.options = options
        let here = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        binary = options.binary ?? (URL(fileURLWithPath: here).deletingLastPathComponent().path + "/groupsync")
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw BenchError("no groupsync binary at \(binary): build it with `swift build -c release` (or pass --binary)")
        }
        folder = try TemporaryFolder(prefix: "groupsync-bench")
        folder.keep = options.keep
        let (yjs, why) = YjsPeer.find(root: options.root)
        self.yjs = yjs
        if let why { results.skip("Yjs peer", why) }
        redisAvailable = RedisServer.executable != nil
        if !redisAvailable { results.skip("Redis peer", "redis-server is not installed (apt-get install redis-server)") }
    }

    /// A fresh device with a unique name in the scratch folder.
    func device(_ name: String) throws -> BenchDevice {
        serial += 1
        return try BenchDevice("\(name)-\(serial)", binary: binary, in: folder)
    }

    func scratch(_ name: String) -> String {
        serial += 1
        return folder.subpath("\(name)-\(serial)")
    }

    /// Removes the scratch folder (globals are not deinitialized at exit).
    func finish() {
        if !options.keep { try? FileManager.default.removeItem(atPath: folder.path) }
    }

    var runs: Int { options.runs }
    var n: Int { options.n }
}
