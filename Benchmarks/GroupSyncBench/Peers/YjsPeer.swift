import Foundation

/// Runs `Benchmarks/scripts/yjs_peer.py` (pycrdt) and hands back its measurements.
struct YjsPeer {
    let script: String
    let python: String
    let version: String

    /// Nil, with the reason, when python3 or pycrdt is missing.
    static func find(root: String) -> (YjsPeer?, String?) {
        let script = root + "/Benchmarks/scripts/yjs_peer.py"
        guard let python = Subprocess.which("python3") else { return (nil, "python3 is not installed") }
        guard FileManager.default.fileExists(atPath: script) else { return (nil, "\(script) is missing") }
        guard let check = try? Subprocess.run(python, ["-c", "import pycrdt; print(getattr(pycrdt, '__version__', 'unknown'))"]),
              check.status == 0 else {
            return (nil, "pycrdt is not installed (pip install pycrdt)")
        }
        return (YjsPeer(script: script, python: python, version: check.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), nil)
    }

    struct Case {
        var kind: String  // "full" or "delta"
        var n: Int
        var k: Int = 0
        var runs: Int
    }

    /// One result dictionary per case, in order (lists of per-run numbers under "bytes", "diff_bytes", …).
    func run(_ cases: [Case]) throws -> [[String: Any]] {
        let spec: [String: Any] = ["cases": cases.map { ["kind": $0.kind, "n": $0.n, "k": $0.k, "runs": $0.runs] }]
        let json = String(decoding: try JSONSerialization.data(withJSONObject: spec), as: UTF8.self)
        let result = try Subprocess.run(python, [script, json], stderr: .inherit)
        guard result.status == 0,
              let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
              let results = object["results"] as? [[String: Any]] else {
            throw BenchError("yjs_peer.py failed (exit \(result.status))")
        }
        return results
    }

    static func numbers(_ result: [String: Any], _ name: String) -> [Double] {
        (result[name] as? [Any])?.compactMap { ($0 as? NSNumber)?.doubleValue } ?? []
    }
}
