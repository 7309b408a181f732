import Foundation

/// A private folder under /tmp for homes, Redis directories and logs; removed at the end unless kept.
final class TemporaryFolder {
    let path: String
    var keep = false

    init(prefix: String) throws {
        var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("mkdtemp failed") }
        path = String(cString: made)
    }

    func subpath(_ name: String) -> String { path + "/" + name }

    func makeFolder(_ name: String) throws -> String {
        let folder = subpath(name)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        return folder
    }

    func remove(_ name: String) { try? FileManager.default.removeItem(atPath: subpath(name)) }

    deinit { if !keep { try? FileManager.default.removeItem(atPath: path) } }
}
