import GroupSyncCore
import GroupSyncDaemon
import GroupSyncStore

/// `groupsync peer add|list|remove`: the devices this one syncs with.
enum PeerCommand: Command {
    static let name = "peer"
    static let summary = "pair, list and unpair devices (add DEVICE_ID HOST:PORT | list | remove DEVICE_ID)"
    static let help = """
        usage: groupsync peer add DEVICE_ID HOST:PORT [--name NAME]
               groupsync peer list [--json]
               groupsync peer remove DEVICE_ID   (or the short ID status shows)

        Pairing is by device ID (see 'groupsync id' on the other device), in both directions: a connection
        is accepted only when each side has paired the other. 'add' on a paired device updates its address
        and name. 'remove' also drops a live connection at once, and says on stderr what of the balance the
        device keeps (its share of the allowance, its earned minutes), if any. A running daemon picks changes
        up at once.
        HOST is an IPv4 address, a host name or [IPv6] (a link-local one with its %interface); without
        :PORT, the port is \(ListenAddress.defaultPort).

          --name NAME     a name for the peer, kept whatever the peer calls itself (default: the name it
                          has, for a paired device; else the start of its ID, until the peer connects and
                          tells its own name, and then each name it tells)
          --json          'list' prints one JSON object per line: id, name, address
        \(homeHelp)
        """
    static let flags = FlagSpec.with(valued: ["--name"], switches: ["--json"])

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        guard let verb = arguments.positionals.first else { throw .usage("missing add, list or remove") }
        var rest = arguments
        rest.positionals.removeFirst()
        switch verb {
        case "add": try add(rest, invocation)
        case "list": try list(rest, invocation)
        case "remove": try remove(rest, invocation)
        default: throw .usage("unknown peer command '\(verb)': use add, list or remove")
        }
    }

    private static func add(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        guard !arguments.has("--json") else { throw .usage("--json goes with 'peer list'") }
        let given = try arguments.positionals("DEVICE_ID", "HOST:PORT")
        let id = try parseID(given[0])
        let address: ListenAddress
        do throws(ListenAddress.Problem) {
            address = try ListenAddress(validating: given[1], defaultHost: "127.0.0.1", defaultPort: ListenAddress.defaultPort)
        } catch {
            throw .badInput("\(error)")
        }
        guard address.port != 0 else { throw .badInput("port 0 cannot be dialed; give the port the peer listens on (for example 192.168.1.20:\(ListenAddress.defaultPort))") }
        let givenName = arguments.value("--name")
        if let givenName, !DeviceName.isValid(givenName) { throw .badInput("--name must be 1 to \(DeviceName.maxBytes) bytes without control characters") }
        let context = try DeviceContext.open(home: invocation.home(arguments))
        guard id != context.deviceID else { throw .badInput("that is this device's own ID; pair it with another device") }
        do throws(StoreError) {
            // Without --name, a device already paired keeps the name it has: 'add' again only to change its address.
            let paired = try context.store.pairedDevices()
            let name = givenName ?? paired.first(where: { $0.id == id })?.name ?? id.short
            try context.store.pair(PairedDevice(id: id, name: name, address: address.description))
        } catch { throw error.asCLIError }
    }

    private static func list(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        guard arguments.value("--name") == nil else { throw .usage("--name goes with 'peer add'") }
        _ = try arguments.positionals()
        let context = try DeviceContext.open(home: invocation.home(arguments))
        let devices: [PairedDevice]
        do { devices = try context.store.pairedDevices() } catch { throw error.asCLIError }
        for device in devices {
            if arguments.has("--json") {
                var object = JSONObject()
                object.add("id", device.id.description)
                object.add("name", device.name)
                object.add("address", device.address)
                Console.out(object.text)
            } else {
                Console.out("\(device.id)  \(device.name)  \(device.address)")
            }
        }
    }

    private static func remove(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        guard arguments.value("--name") == nil, !arguments.has("--json") else { throw .usage("'peer remove' takes only DEVICE_ID") }
        let given = try arguments.positionals("DEVICE_ID")[0]
        let context = try DeviceContext.open(home: invocation.home(arguments))
        let paired: [PairedDevice]
        do { paired = try context.store.pairedDevices() } catch { throw error.asCLIError }
        let id = try pairedID(given, among: paired)
        let removed: Bool
        do { removed = try context.store.unpair(id) } catch { throw error.asCLIError }
        guard removed else { throw .notFound("device \(given) is not paired") }
        if let share = balanceShare(of: id, context, invocation) {
            Console.error("groupsync: note: \(id.short) keeps its share of the balance (\(share)), which no other device can spend; before removing a device for good, spend or hand over its minutes while it is connected (RELIABILITY.md, known limitation 9)")
        }
    }

    /// What of the balance a removed device keeps, in words, or nil when it keeps nothing: its slices of every
    /// later day's allowance, and the earned minutes it holds. Said when it is removed, the moment a user who
    /// replaces a machine learns why the allowance shrank (before, the balance shrank by its share in silence).
    private static func balanceShare(of id: DeviceID, _ context: DeviceContext, _ invocation: Invocation) -> String? {
        let session = BalanceSession(context: context, environment: invocation.environment)
        guard let (slices, earnedMs) = try? session.update({ book -> (Int64, Int64)? in
            guard let account = book.ledger.liveAccount(of: id) else { return nil }
            return (book.ledger.slices(of: account, on: nil).count, book.ledger.earnedHeldMs(of: account, today: book.today))
        }) else { return nil }
        var parts: [String] = []
        if slices > 0 { parts.append("\(slices * 100 / QuotaSlices.total)% of each day's allowance") }
        if earnedMs > 0 { parts.append("\(BalanceFormatting.minutes(earnedMs)) earned minutes") }
        return parts.isEmpty ? nil : parts.joined(separator: " and ")
    }

    /// A whole device ID, or the short one `status`, `peer list` and the logs show (its first group), when it
    /// is a paired device's: typing the whole ID to unpair what status names by seven letters was needless
    /// (found by review).
    private static func pairedID(_ text: String, among paired: [PairedDevice]) throws(CLIError) -> DeviceID {
        if let id = try? DeviceID(parsing: text) { return id }
        let matching = paired.filter { $0.id.short == text.uppercased() }
        if matching.count == 1 { return matching[0].id }
        if matching.count > 1 { throw .badInput("\(matching.count) paired devices start with \(text): give the whole ID (see 'groupsync peer list')") }
        if text.count == 7 { throw .notFound("no paired device starts with \(text) (see 'groupsync peer list')") }
        return try parseID(text)  // refused, in the parser's own words
    }

    private static func parseID(_ text: String) throws(CLIError) -> DeviceID {
        do { return try DeviceID(parsing: text) } catch { throw .badInput(error.description + " (see 'groupsync peer list', or 'groupsync id' on that device)") }
    }
}
