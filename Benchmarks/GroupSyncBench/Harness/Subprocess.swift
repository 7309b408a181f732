import Foundation
import Glibc

/// A child process started with posix_spawn: cheaper than Foundation's `Process`, which matters when eight
/// threads spawn `groupsync set` as fast as they can, and it gives the raw stdout pipe to a reader thread.
final class Subprocess {
    enum Output { case inherit, discard, pipe, file(String) }

    let pid: pid_t
    let executable: String
    /// The read end of stdout when started with `.pipe`.
    let stdoutFD: Int32?
    private var exitStatus: Int32?

    init(_ executable: String, _ arguments: [String], stdout: Output = .discard, stderr: Output = .discard) throws {
        self.executable = executable
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var pipeFDs: [Int32] = [-1, -1]
        func route(_ output: Output, to fd: Int32) throws {
            switch output {
            case .inherit: break
            case .discard: posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_WRONLY, 0)
            case .file(let path): posix_spawn_file_actions_addopen(&actions, fd, path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            case .pipe:
                guard pipe(&pipeFDs) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
                // Only the child's dup2'd copy may survive exec, or the reader never sees EOF.
                for end in pipeFDs { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], fd)
            }
        }
        try route(stdout, to: 1)
        if case .pipe = stderr { throw BenchError("stderr cannot be piped; use a file") }
        try route(stderr, to: 2)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)

        // An empty signal mask and default SIGPIPE: the child must not inherit a blocked SIGTERM.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, &attributes, argv, environ)
        if pipeFDs[1] >= 0 { close(pipeFDs[1]) }
        guard rc == 0 else {
            if pipeFDs[0] >= 0 { close(pipeFDs[0]) }
            throw BenchError("cannot start \(executable): \(String(cString: strerror(rc)))")
        }
        pid = child
        stdoutFD = pipeFDs[0] >= 0 ? pipeFDs[0] : nil
        Self.live.withLock { _ = Self.pids.insert(child) }
    }

    // Children still running, so an interrupted bench can end them (see `endAll`).
    private static let live = NSLock()
    nonisolated(unsafe) private static var pids: Set<pid_t> = []

    /// Kills every child still running: daemons, Redis servers, watches.
    static func endAll() {
        for pid in live.withLock({ pids }) { kill(pid, SIGKILL) }
    }

    deinit {
        if exitStatus == nil { kill(pid, SIGKILL); _ = wait() }
        if let stdoutFD { close(stdoutFD) }
    }

    var isRunning: Bool {
        guard exitStatus == nil else { return false }
        var status: Int32 = 0
        let rc = waitpid(pid, &status, WNOHANG)
        if rc == pid { exitStatus = Self.decode(status); Self.live.withLock { _ = Self.pids.remove(pid) }; return false }
        return true
    }

    /// Waits for the exit; the exit code, or 128 + the signal.
    @discardableResult
    func wait() -> Int32 {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        exitStatus = Self.decode(status)
        Self.live.withLock { _ = Self.pids.remove(pid) }
        return exitStatus!
    }

    /// Sends `signal` and waits up to `seconds`, then SIGKILL.
    @discardableResult
    func stop(signal: Int32 = SIGTERM, seconds: Double = 10) -> Int32 {
        guard isRunning else { return exitStatus ?? -1 }
        kill(pid, signal)
        let deadline = Deadline(seconds: seconds, "stop")
        while isRunning && !deadline.expired { usleep(2000) }
        if isRunning { kill(pid, SIGKILL) }
        return wait()
    }

    /// Reads stdout to its end (only with `.pipe`).
    func readAll() -> String {
        guard let stdoutFD else { return "" }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(stdoutFD, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func decode(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Runs to completion and returns the exit code and stdout.
    static func run(_ executable: String, _ arguments: [String], stderr: Output = .discard) throws -> (status: Int32, stdout: String) {
        let process = try Subprocess(executable, arguments, stdout: .pipe, stderr: stderr)
        let output = process.readAll()
        return (process.wait(), output)
    }

    /// The absolute path of a program on PATH, or nil.
    static func which(_ name: String) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        let path = String(cString: getenv("PATH") ?? strdup("/usr/bin:/bin"))
        for folder in path.split(separator: ":") {
            let candidate = "\(folder)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}

/// Splits the bytes of a pipe into lines, stamping each with the monotonic time it was read.
struct LineReader {
    let fd: Int32
    private var pending: [UInt8] = []

    init(fd: Int32) { self.fd = fd }

    /// Blocks for the next chunk; returns the complete lines in it (empty at EOF, with `eof` set).
    mutating func next() -> (lines: [String], at: UInt64, eof: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = read(fd, &buffer, buffer.count)
        let at = Clock.nanos()
        if n <= 0 { return ([], at, !(n < 0 && errno == EINTR)) }
        pending += buffer[0..<n]
        var lines: [String] = []
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: pending[..<newline], as: UTF8.self))
            pending.removeSubrange(...newline)
        }
        return (lines, at, false)
    }
}
