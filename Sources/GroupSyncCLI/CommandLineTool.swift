import Glibc
import GroupSyncStore
import GroupSyncTransport

/// The `groupsync` entry point: finds the command, parses its flags, runs it, maps failures to exit codes.
public enum CommandLineTool {
    static let commands: [any Command.Type] = [
        InitCommand.self, IdCommand.self,
        SetCommand.self, GetCommand.self, DeleteCommand.self, ListCommand.self, WatchCommand.self,
        PeerCommand.self, ServeCommand.self, StatusCommand.self, NotifyCommand.self,
        BalanceCommand.self, UsageCommand.self, FireCommand.self, SimulateCommand.self,
    ]

    static var overview: String {
        let width = commands.map { $0.name.count }.max() ?? 0
        let lines = commands.map { "  \($0.name)\(String(repeating: " ", count: width - $0.name.count + 2))\($0.summary)" }
        return """
            usage: groupsync [--home DIR] COMMAND [ARGS]

            GroupSync keeps an App Group-style key-value store in step across one user's devices.

            commands:
            \(lines.joined(separator: "\n"))

            'groupsync COMMAND --help' describes a command. Exit codes: 0 done, 1 not found (a key, a
            peer, a notification), 2 bad usage or bad input, 3 the environment failed (disk, damaged files,
            no daemon where one is needed, a port taken), 4 a simulated seed failed.
            """
    }

    public static func main(_ arguments: [String], environment: [String: String]) -> Int32 {
        // Everything the process creates in the home (SQLite's WAL and shm files included) is private.
        umask(0o077)
        // A parent may start us with signals blocked (threaded test runners and some supervisors do);
        // SIGTERM must still end `watch` and `serve`, so start from an empty mask.
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        pthread_sigmask(SIG_SETMASK, &noSignals, nil)
        // A reader that goes away (e.g. `watch | head`) must end the command cleanly, not kill it.
        signal(SIGPIPE, SIG_IGN)
        // Before anything touches OpenSSL: threads still ending TLS sessions when `serve` returns must not
        // race OpenSSL's exit-time cleanup.
        Transport.initializeOpenSSLWithoutExitHandler()
        var rest = arguments.dropFirst()
        // `--home DIR` may also come before the command.
        var leadingHome: [String] = []
        while let first = rest.first, first == "--home" || first.hasPrefix("--home=") {
            leadingHome.append(first)
            rest = rest.dropFirst()
            if first == "--home", let value = rest.first {
                leadingHome.append(value)
                rest = rest.dropFirst()
            }
        }
        guard let name = rest.first else {
            // Bad usage gets one line naming the problem (issue 2), as every other mistake does; the overview is
            // one `--help` away.
            let problem = leadingHome.last == "--home" ? "--home needs a folder" : "no command given"
            Console.error("groupsync: \(problem); see 'groupsync --help' for the commands")
            return 2
        }
        if name == "help", let topic = rest.dropFirst().first {
            // `groupsync help set`, as git and most tools read it: that command's help.
            guard let command = commands.first(where: { $0.name == topic }) else {
                Console.error("groupsync help: unknown command '\(topic)'; see 'groupsync --help'")
                return 2
            }
            Console.out(command.help)
            return ExitCode.success
        }
        if name == "--help" || name == "-h" || name == "help" {
            Console.out(overview)
            return ExitCode.success
        }
        if name == "--version" {
            Console.out("groupsync \(version)")
            return ExitCode.success
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            Console.error("groupsync: unknown command '\(name)'; see 'groupsync --help'")
            return 2
        }
        // A write that waits on another process's lock says so, and who holds it, rather than look hung.
        LockWait.notice = { Console.error("groupsync \(name): \($0)") }
        do {
            let parsed = try ArgumentParser.parse(ArraySlice(leadingHome) + rest.dropFirst(), spec: command.flags)
            if parsed.wantsHelp {
                Console.out(command.help)
                return ExitCode.success
            }
            try command.run(parsed, Invocation(environment: environment))
            if let failure = Console.outputFailure {
                Console.error("groupsync \(name): cannot write its output: \(failure)")
                return CLIError.failure(failure).exitCode
            }
            return ExitCode.success
        } catch {
            let hint = if case .usage = error { " (see 'groupsync \(name) --help')" } else { "" }
            Console.error("groupsync \(name): \(error)\(hint)")
            return error.exitCode
        }
    }

    public static let version = "0.1.0"
}
