import Foundation

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A child process with a line-oriented stdout, read with deadlines so a hung child fails the test instead of
/// hanging it.
final class ChildProcess {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer: [UInt8] = []

    init(_ executable: String, _ arguments: [String], environment: [String: String]) throws {
        // A write to a child that died must fail the test, not kill the test process.
        signal(SIGPIPE, SIG_IGN)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        // Our ends of the pipes must not leak into this or any other child: a child holding the write end of
        // its own stdin never sees end of input (the probe would not end, and dbus-run-session with it).
        for fd in [input.fileHandleForWriting.fileDescriptor, output.fileHandleForReading.fileDescriptor] {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        // The test runner's threads block most signals, and a spawned child inherits the spawning thread's
        // mask: dbus-daemon and the recording server would then ignore the SIGTERM that ends them. Spawn
        // from an empty mask, on this thread only, for the moment of the spawn.
        var empty = sigset_t(), saved = sigset_t()
        sigemptyset(&empty)
        pthread_sigmask(SIG_SETMASK, &empty, &saved)
        defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
        try process.run()
    }

    func send(_ line: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Closing stdin is how the probe is asked to end.
    func closeInput() { try? input.fileHandleForWriting.close() }

    /// The next line, `nil` at end of output; throws when `timeout` passes first.
    func readLine(timeout: Duration = .seconds(10)) throws -> String? {
        let fd = output.fileHandleForReading.fileDescriptor
        let deadline = ContinuousClock.now + timeout
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let remaining = deadline - .now
            guard remaining > .zero else { throw HarnessError("no line from \(process.executableURL?.lastPathComponent ?? "child") within \(timeout)") }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let millis = Int32(min(remaining.components.seconds * 1000 + 1, 1000))
            guard poll(&pfd, 1, millis) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                if buffer.isEmpty { return nil }
                defer { buffer = [] }
                return String(decoding: buffer, as: UTF8.self)
            }
            buffer += chunk[..<n]
        }
    }

    /// Waits for the child to exit; kills it if it does not within `timeout`. Returns whether it exited on its own.
    @discardableResult
    func waitForExit(timeout: Duration = .seconds(10)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                return false
            }
            usleep(10_000)
        }
        return true
    }

    func terminate() {
        if process.isRunning { process.terminate() }
        waitForExit()
    }
}
