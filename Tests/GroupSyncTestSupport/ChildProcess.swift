import CChildSpawn
import Foundation
import Synchronization

/// A child process for tests, spawned with `posix_spawn` rather than Foundation's `Process`.
///
/// Why not `Process`: the test runner starts children from many threads at once, and `Process` creates its
/// pipes and its exit-watching socket without close-on-exec, then closes in the child only the descriptors
/// open when it scanned `/proc/self/fd`. A descriptor another thread creates between that scan and the spawn
/// leaks into the child. A leaked stdin keeps a child from ever seeing end of input, a leaked stdout keeps a
/// reader from ever seeing end of output, and a leaked exit socket keeps `Process` from ever noticing an exit:
/// one CI run hung a notification test past its minute that way. Here every pipe is close-on-exec from its
/// creation, every child starts with nothing but stdin, stdout and stderr, with no signal blocked or ignored
/// (the runner's threads block most, and a dbus-daemon or python that never sees SIGTERM hangs its test), in
/// a process group of its own, and every wait has a deadline after which the whole group is killed.
public final class ChildProcess: @unchecked Sendable {
    public enum Input: Sendable { case pipe, null }
    public enum Output: Sendable {
        case pipe, null, appendingTo(String)
        /// For stderr: into stdout, wherever that goes, in the order written.
        case toStdout
    }
    public enum Ending: Equatable, Sendable {
        case exited(Int32)
        case signaled(Int32)

        /// The exit code, or the signal's number: what Foundation's `terminationStatus` reports.
        public var status: Int32 {
            switch self { case .exited(let code), .signaled(let code): code }
        }
    }

    public let pid: pid_t
    public let name: String
    private let ending = Mutex<Ending?>(nil)
    private let pipes = Mutex<Pipes>(Pipes())

    /// Spawns `executable` (a path) with `arguments`, in `environment` (this process's when nil).
    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                stdin: Input = .null, stdout: Output = .null, stderr: Output = .null) throws {
        _ = Self.ignoreBrokenPipes
        name = URL(fileURLWithPath: executable).lastPathComponent
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var childEnds: [Int32] = []
        defer { childEnds.forEach { close($0) } }
        var ours = Pipes()
        do {
            switch stdin {
            case .pipe:
                let (read, write) = try Self.pipe()
                childEnds.append(read)
                ours.input = write
                // Ours only (the child's end is another open file): a write can then wait with a deadline.
                _ = fcntl(write, F_SETFL, fcntl(write, F_GETFL) | O_NONBLOCK)
                posix_spawn_file_actions_adddup2(&actions, read, 0)
            case .null:
                posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            }
            for (fd, output) in [(Int32(1), stdout), (2, stderr)] {
                switch output {
                case .toStdout:
                    guard fd == 2 else { throw HarnessError("only stderr can go to stdout") }
                    posix_spawn_file_actions_adddup2(&actions, 1, 2)
                case .pipe:
                    let (read, write) = try Self.pipe()
                    childEnds.append(write)
                    if fd == 1 { ours.output.fd = read } else { ours.errors.fd = read }
                    posix_spawn_file_actions_adddup2(&actions, write, fd)
                case .null:
                    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_WRONLY, 0)
                case .appendingTo(let path):
                    posix_spawn_file_actions_addopen(&actions, fd, path, O_WRONLY | O_APPEND | O_CREAT, 0o600)
                }
            }
            let closing = child_spawn_close_from(&actions, 3)
            guard closing == 0 else { throw HarnessError("posix_spawn_file_actions_addclosefrom_np: \(String(cString: strerror(closing)))") }

            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            var noSignals = sigset_t(), allSignals = sigset_t()
            sigemptyset(&noSignals)
            sigfillset(&allSignals)
            posix_spawnattr_setsigmask(&attributes, &noSignals)
            posix_spawnattr_setsigdefault(&attributes, &allSignals)
            posix_spawnattr_setpgroup(&attributes, 0)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

            var child: pid_t = 0
            let spawned = Self.withCStrings([executable] + arguments) { argv in
                if let environment {
                    return Self.withCStrings(environment.map { "\($0.key)=\($0.value)" }) { envp in
                        posix_spawn(&child, executable, &actions, &attributes, argv, envp)
                    }
                }
                return posix_spawn(&child, executable, &actions, &attributes, argv, environ)
            }
            guard spawned == 0 else { throw HarnessError("cannot start \(executable): \(String(cString: strerror(spawned)))") }
            pid = child
        } catch {
            if ours.input >= 0 { close(ours.input) }
            ours.output.close()
            ours.errors.close()
            throw error
        }
        pipes.withLock { $0 = ours }
    }

    deinit {
        if ending.withLock({ $0 == nil }) {
            // Not reaped yet, so the group still exists and is ours: end all of it.
            kill(-pid, SIGKILL)
            _ = reap(blocking: true)
        }
        closeInput()
        pipes.withLock { $0.output.close(); $0.errors.close() }
    }

    // MARK: Input and output

    /// Writes a line to the child's stdin.
    public func send(_ line: String) throws { try write(Array((line + "\n").utf8)) }

    /// Writes to the child's stdin; throws if the child has not taken it all within `timeout` (it stopped
    /// reading and the pipe is full).
    public func write(_ bytes: [UInt8], timeout: Duration = .seconds(10)) throws {
        let fd = pipes.withLock { $0.input }
        guard fd >= 0 else { throw HarnessError("\(name)'s stdin is not an open pipe") }
        let deadline = ContinuousClock.now + timeout
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                offset += n
                continue
            }
            guard n < 0 && (errno == EINTR || errno == EAGAIN) else {
                throw HarnessError("writing to \(name): \(String(cString: strerror(errno)))")
            }
            let remaining = deadline - .now
            guard remaining > .zero else { throw HarnessError("\(name) did not read its input within \(timeout)") }
            var pollFD = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&pollFD, 1, Int32(min(remaining.components.seconds * 1000 + 1, 1000)))
        }
    }

    /// Closing stdin is how a child reading it is asked to end.
    public func closeInput() {
        pipes.withLock { pipes in
            if pipes.input >= 0 { close(pipes.input) }
            pipes.input = -1
        }
    }

    /// Closing our end of stdout: the child's next write fails, as when a reader goes away.
    public func closeOutput() { pipes.withLock { $0.output.close() } }

    /// The next line of stdout (without its newline); `nil` at its end. Throws when `timeout` passes first.
    public func readLine(timeout: Duration = .seconds(10)) throws -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (line, open) = pipes.withLock { ($0.output.takeLine(), $0.output.fd >= 0) }
            if let line { return line }
            guard open else { return pipes.withLock { $0.output.takeRest() } }
            try readMore(until: deadline)
        }
    }

    /// Everything the child writes to stdout and to a stderr pipe until it closes them; throws when `timeout`
    /// passes first.
    public func readToEnd(timeout: Duration = .seconds(60)) throws -> (output: String, errors: String) {
        let deadline = ContinuousClock.now + timeout
        while pipes.withLock({ $0.output.fd >= 0 || $0.errors.fd >= 0 }) { try readMore(until: deadline) }
        return pipes.withLock { ($0.output.takeRest() ?? "", $0.errors.takeRest() ?? "") }
    }

    /// Waits for stdout or the stderr pipe to have something, and reads it; an end of output closes that pipe.
    /// Both are read, so a child that fills one while we wait for the other cannot block.
    private func readMore(until deadline: ContinuousClock.Instant) throws {
        let fds = pipes.withLock { [$0.output.fd, $0.errors.fd] }
        var pollFDs = fds.filter { $0 >= 0 }.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        guard !pollFDs.isEmpty else { return }
        while true {
            let remaining = deadline - .now
            guard remaining > .zero else { throw HarnessError("no end of output from \(name) within the time allowed") }
            let ready = poll(&pollFDs, nfds_t(pollFDs.count), Int32(min(remaining.components.seconds * 1000 + 1, 1000)))
            if ready > 0 { break }
        }
        for pollFD in pollFDs where pollFD.revents != 0 {
            var chunk = [UInt8](repeating: 0, count: 65536)
            var n: Int
            repeat { n = read(pollFD.fd, &chunk, chunk.count) } while n < 0 && errno == EINTR
            pipes.withLock { pipes in
                let stream: WritableKeyPath<Pipes, Stream> = pollFD.fd == pipes.output.fd ? \.output : \.errors
                if n > 0 { pipes[keyPath: stream].buffer += chunk[..<n] } else { pipes[keyPath: stream].close() }
            }
        }
    }

    // MARK: Lifetime

    /// How the child ended, once it has and has been waited for.
    public var ended: Ending? {
        if let ended = ending.withLock({ $0 }) { return ended }
        return reap(blocking: false)
    }

    public var isRunning: Bool { ended == nil }

    /// Sends `signal` to the child, unless it has been waited for (its number may then be another process's).
    public func signal(_ signal: Int32) {
        ending.withLock { ended in
            if ended == nil { kill(pid, signal) }
        }
    }

    /// Waits for the child to exit; past `timeout`, kills its whole process group. The child's ending.
    @discardableResult
    public func waitForExit(timeout: Duration = .seconds(10)) -> Ending {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let ended { return ended }
            usleep(5_000)
        }
        signalGroup(SIGKILL)
        return reap(blocking: true) ?? .signaled(SIGKILL)
    }

    /// SIGTERM, then SIGKILL to the whole group if it has not ended within `timeout`.
    @discardableResult
    public func terminate(timeout: Duration = .seconds(10)) -> Ending {
        signal(SIGTERM)
        return waitForExit(timeout: timeout)
    }

    private func signalGroup(_ signal: Int32) {
        ending.withLock { ended in
            if ended == nil { kill(-pid, signal) }
        }
    }

    private func reap(blocking: Bool) -> Ending? {
        ending.withLock { ended in
            if let ended { return ended }
            var status: Int32 = 0
            var result: pid_t
            repeat { result = waitpid(pid, &status, blocking ? 0 : WNOHANG) } while result < 0 && errno == EINTR
            guard result == pid else { return nil }
            // WIFSIGNALED and friends are macros Swift does not import.
            ended = status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signaled(status & 0x7f)
            return ended
        }
    }

    // MARK: Running to the end

    public struct Result: Sendable {
        public var ending: Ending
        public var output: String
        /// stderr, when it was a pipe of its own.
        public var errors: String
        public var status: Int32 { ending.status }
    }

    /// Runs a command to its end with stdin at end of file (or fed `input`), collecting stdout, and stderr when
    /// it is `.pipe` (or `.toStdout`). Past `timeout` the child's group is killed and this throws.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                           input: String? = nil, stderr: Output = .null, timeout: Duration = .seconds(120)) throws -> Result {
        let child = try ChildProcess(executable, arguments, environment: environment, stdin: input == nil ? .null : .pipe,
                                     stdout: .pipe, stderr: stderr)
        if let input {
            try child.write(Array(input.utf8))
            child.closeInput()
        }
        let deadline = ContinuousClock.now + timeout
        let output: (output: String, errors: String)
        do { output = try child.readToEnd(timeout: timeout) } catch {
            child.waitForExit(timeout: .zero)
            throw HarnessError("\(child.name) \(arguments.joined(separator: " ")) did not finish within \(timeout)")
        }
        // One deadline for both: a child that closed its output but lingers gets only what is left of it.
        let ending = child.waitForExit(timeout: max(deadline - .now, .seconds(1)))
        return Result(ending: ending, output: output.output, errors: output.errors)
    }

    // MARK: Helpers

    private static let ignoreBrokenPipes: Void = {
        // A write to a child that died must fail the test, not kill the test process.
        _ = Glibc.signal(SIGPIPE, SIG_IGN)
    }()

    private static func pipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard child_spawn_pipe(&fds) == 0 else { throw HarnessError("pipe2: \(String(cString: strerror(errno)))") }
        return (fds[0], fds[1])
    }

    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        return body(pointers)
    }
}

/// Our ends of the child's pipes.
private struct Pipes {
    var input: Int32 = -1
    var output = Stream()
    var errors = Stream()
}

/// One of the child's outputs: our end of its pipe, and what has been read but not yet taken.
private struct Stream {
    var fd: Int32 = -1
    var buffer: [UInt8] = []

    mutating func takeLine() -> String? {
        guard let newline = buffer.firstIndex(of: 10) else { return nil }
        defer { buffer.removeSubrange(...newline) }
        return String(decoding: buffer[..<newline], as: UTF8.self)
    }

    mutating func takeRest() -> String? {
        guard !buffer.isEmpty else { return nil }
        defer { buffer = [] }
        return String(decoding: buffer, as: UTF8.self)
    }

    mutating func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }
}

public struct HarnessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
