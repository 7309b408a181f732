import GroupSyncDaemon
import GroupSyncStore

/// `groupsync serve [--listen HOST:PORT]`: the daemon, in the foreground.
enum ServeCommand: Command {
    static let name = "serve"
    static let summary = "run the sync daemon in the foreground"
    static let help = """
        usage: groupsync serve [--listen HOST:PORT] [--max-clock-drift SECONDS] [--home DIR]

        Runs the daemon in the foreground: accepts paired devices over mutually authenticated TLS 1.3,
        dials every paired device (reconnecting with backoff), and sends each one what it lacks. Writes by
        any process on this machine reach connected peers within milliseconds. Logs one line per event to
        stderr. Stops cleanly on SIGTERM, SIGINT or SIGHUP. One daemon per home.

          --listen HOST:PORT  where to accept peers (default :\(ListenAddress.defaultPort), every interface: 0.0.0.0 and [::],
                              the latter unless IPv6 is disabled); :PORT is every interface, 0.0.0.0:PORT
                              every IPv4 one; port 0 picks a free one;
                              a name is listened on at each of its addresses; status shows what is bound
          --max-clock-drift SECONDS
                              refuse entries stamped further ahead of this device's clock, and sessions with a
                              peer whose clock is further off (default 300); refused entries are offered again
                              and accepted once the clocks agree
        \(homeHelp)
        """
    static let flags = FlagSpec.with(valued: ["--listen", "--max-clock-drift"])

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        _ = try arguments.positionals()
        var listen = ListenAddress.default
        if let text = arguments.value("--listen") {
            do throws(ListenAddress.Problem) {
                listen = try ListenAddress(validating: text, defaultHost: ListenAddress.everyInterface)
            } catch {
                throw .badInput("--listen expects HOST:PORT, [IPv6]:PORT or :PORT: \(error)")
            }
        }
        var configuration = Daemon.Configuration(home: try invocation.home(arguments), listen: listen)
        configuration.environment = invocation.environment
        if let text = arguments.value("--max-clock-drift") {
            guard let seconds = Int64(text), seconds >= 1, seconds <= 86_400 * 365 else {
                throw .badInput("--max-clock-drift expects whole seconds from 1 to 31536000, got '\(text)'")
            }
            configuration.maxClockDriftMillis = seconds * 1000
        }
        // A store made here is said in the daemon's log, as a line of it.
        let context = try DeviceContext.open(home: configuration.home, sayingIfMade: false)
        configuration.storeMadeBeforeStart = context.store.madeTheFile
        let name = context.home.deviceName() ?? "groupsync"
        let status: Int32
        do {
            let daemon = try Daemon(configuration: configuration, certificate: context.certificate, deviceName: name)
            status = try daemon.run()
        } catch DaemonError.badListenAddress(let text) {
            throw .badInput(text)
        } catch DaemonError.badHome(let text) {
            throw .badInput(text)
        } catch {
            throw .failure(error.description)
        }
        // The daemon stopped itself; its log says why.
        guard status == 0 else { throw .failure("the daemon stopped because its store is no longer in \(configuration.home.path) as it was (see the line before)") }
    }
}
