import Foundation
import GroupSyncTransport

/// Runs the `openssl` command-line tool, as an independent check on what the library produces.
enum OpenSSLTool {
    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    static func run(_ arguments: [String], input: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failed(description: "openssl \(arguments) exited with \(process.terminationStatus)")
        }
        return String(decoding: output, as: UTF8.self)
    }
}

extension OpenSSLTool {
    /// Runs `openssl` with stdin at EOF, killing it after `seconds`; returns its exit status and combined output.
    static func runBounded(_ arguments: [String], seconds: Double = 5) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        let output = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let watchdog = DispatchWorkItem { [process] in if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: watchdog)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        watchdog.cancel()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
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
