import Foundation
import GroupSyncTestSupport
import GroupSyncTransport

/// Runs the `openssl` command-line tool, as an independent check on what the library produces.
enum OpenSSLTool {
    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    static func run(_ arguments: [String], input: String) throws -> String {
        let run = try ChildProcess.run("/usr/bin/env", ["openssl"] + arguments, input: input)
        guard run.status == 0 else { throw Failed(description: "openssl \(arguments) exited with \(run.status)") }
        return run.output
    }
}

extension OpenSSLTool {
    /// Runs `openssl` with stdin at EOF, killing it after `seconds`; returns its exit status and combined output.
    static func runBounded(_ arguments: [String], seconds: Double = 5) throws -> (status: Int32, output: String) {
        let child = try ChildProcess("/usr/bin/env", ["openssl"] + arguments, stdout: .pipe, stderr: .toStdout)
        var output = try? child.readToEnd(timeout: .milliseconds(Int(seconds * 1000)))
        if output == nil {
            child.signal(SIGTERM)
            output = try? child.readToEnd(timeout: .seconds(2))
        }
        return (child.waitForExit(timeout: .seconds(2)).status, output?.output ?? "")
    }

    /// Writes an identity's PEM files into a fresh temporary directory for `-cert`/`-key`.
    static func files(for identity: DeviceCertificate) throws -> (cert: String, key: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let cert = directory.appendingPathComponent("cert.pem"), key = directory.appendingPathComponent("key.pem")
        try Data(identity.certificatePEM.utf8).write(to: cert)
        try Data(identity.privateKeyPEM.utf8).write(to: key)
        return (cert.path, key.path)
    }
}
