import Foundation

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
