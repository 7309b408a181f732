import GroupSyncCore
import GroupSyncDaemon
import GroupSyncStore

/// `groupsync status [--json]`: this device, its daemon, and each peer's sync state.
enum StatusCommand: Command {
    static let name = "status"
    static let summary = "show this device, the daemon and each peer's sync state"
    static let help = """
        usage: groupsync status [--json]

        Shows this device's ID and name, whether its daemon runs and where it listens, and for each paired
        device: id, name, address, connected, last sync time, clock offset (the peer's clock minus ours),
        and how many of our changes it has not yet acknowledged (each write counts: three writes of one key
        while it is away are three, though only the last is sent; "our changes" are every change in this
        device's store: its own writes, what it relays from other devices, and GroupSync's own records such
        as the balance's). Without a running daemon, the peers are
        listed as disconnected with what the daemon knew when its last session with each ended, and every
        write made since counted as pending. A peer never reached has every change pending, and what
        was never learned of it (last sync, clock offset) is null.
        While the daemon runs, a peer it cannot sync with also shows its last error: why the last connection
        attempt or session failed (the peer unreachable, a clock too far off, a full disk); null while
        connected, and without a daemon.

        A daemon that runs but does not answer (stopped, or swamped by clients) is shown as running but not
        answering (`answering` false), with the peers as it last saved them.

          --json          one JSON object: id, name, listen, listenAddresses, running, answering, peers[{id, name, address, connected,
                          lastSync, lastSyncMillis, clockOffsetMillis, pendingChanges, lastError}]
        \(homeHelp)
        """
    static let flags = FlagSpec.with(switches: ["--json"])

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        _ = try arguments.positionals()
        let context = try DeviceContext.open(home: invocation.home(arguments))
        if let json = ControlClient.request(home: context.home, #"{"command":"status"}"#), let text = textView(fromJSON: json) {
            if arguments.has("--json") {
                Console.out(json)
            } else {
                // The daemon's JSON is the source of truth; the text view is rebuilt from it.
                Console.out(text)
            }
            return
        }
        // No daemon, or one that did not answer: what it knew of each peer when their last session ended, with
        // what was written since counted as pending.
        let devices: [PairedDevice], remembered: [DeviceID: SessionStatus], head: Int64
        do {
            devices = try context.store.pairedDevices()
            remembered = try context.store.savedSyncStatuses()
            head = try context.store.lastSequence()
        } catch { throw error.asCLIError }
        let name = context.home.deviceName() ?? ""
        let running = UnansweredDaemon(home: context.home) == .notAnswering
        let report = StatusReport(device: context.deviceID, name: name, listen: nil, running: running, answering: false, peers: devices.map {
            let known = remembered[$0.id]
            return StatusReport.Peer(id: $0.id, name: $0.name, address: $0.address, connected: false, lastSyncMillis: known?.lastSyncMillis,
                                     clockOffsetMillis: known?.clockOffsetMillis, pendingChanges: SessionStatus.pending(known, head: head))
        })
        Console.out(arguments.has("--json") ? report.json : report.text)
    }

    private static func textView(fromJSON json: String) -> String? {
        guard case .dictionary(let object)? = try? JSONParser.parse(json, nullMembers: .omittedEverywhere),
              case .string(let idText)? = object["id"], let id = try? DeviceID(parsing: idText),
              case .array(let peers)? = object["peers"] else { return nil }
        func string(_ value: Value?) -> String? { if case .string(let s)? = value { return s }; return nil }
        func strings(_ value: Value?) -> [String]? { if case .array(let a)? = value { return a.compactMap(string) }; return nil }
        func int(_ value: Value?) -> Int64? { if case .int(let i)? = value { return i }; return nil }
        let report = StatusReport(device: id, name: string(object["name"]) ?? "", listen: string(object["listen"]),
                                  listenAddresses: strings(object["listenAddresses"]), running: true, peers: peers.compactMap { peer in
            guard case .dictionary(let p) = peer, let peerID = string(p["id"]).flatMap({ try? DeviceID(parsing: $0) }) else { return nil }
            return StatusReport.Peer(id: peerID, name: string(p["name"]) ?? "", address: string(p["address"]) ?? "",
                                     connected: p["connected"] == .bool(true), lastSyncMillis: int(p["lastSyncMillis"]),
                                     clockOffsetMillis: int(p["clockOffsetMillis"]), pendingChanges: int(p["pendingChanges"]).map(Int.init),
                                     lastError: string(p["lastError"]), remoteAddress: string(p["remoteAddress"]))
        })
        return report.text
    }
}
