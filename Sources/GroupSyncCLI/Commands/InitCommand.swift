import Glibc
import GroupSyncCore
import GroupSyncStore

/// `groupsync init [--name NAME]`: creates the home and the device identity; a second run keeps both.
enum InitCommand: Command {
    static let name = "init"
    static let summary = "create this device's home and identity (kept if they exist)"
    static let help = """
        usage: groupsync init [--name NAME] [--new-identity] [--home DIR]

        Creates the home folder (mode 0700) with a store and a device identity: a key pair and a
        self-signed certificate whose SHA-256 fingerprint is the device ID. Running it again keeps the
        identity; --name renames the device. Prints the device ID.

        A home whose store is there but whose key.pem and cert.pem are both gone is refused (exit 3):
        restore the two files from a backup to keep the device ID.

          --name NAME     a name for this device, sent to paired devices when a session starts, whose logs
                          show it; their status and peer list show the name given to 'peer add --name', or
                          this name when none was given, a new one from the next session on (default:
                          the host name)
          --new-identity  in such a home, make a new identity instead and go on with the store's data as a
                          new device: on your other devices, remove the old ID and pair the new one
        \(homeHelp)
        """
    static let flags = FlagSpec.with(valued: ["--name"], switches: ["--new-identity"])

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        _ = try arguments.positionals()
        let home = try invocation.home(arguments)
        if let name = arguments.value("--name") {
            guard DeviceName.isValid(name) else { throw .badInput("--name must be 1 to \(DeviceName.maxBytes) bytes without control characters") }
        }
        // SQLite opens no path of 512 bytes or more, and a store is first built under a longer temporary name:
        // said here, before anything is made, where it failed halfway with "unable to open database file",
        // leaving a key and certificate behind (found by review).
        let building = home.storePath + ".new-4294967295-4294967295"
        guard building.utf8.count < 512 else {
            throw .badInput("the home's path is too long (\(home.path.utf8.count) bytes): its store would need a path of \(building.utf8.count), and SQLite opens none of 512 bytes or more; choose a shorter --home")
        }
        // Refused before the home is made: bad usage changes nothing (under the lock, it is checked again).
        if arguments.has("--new-identity") && !DeviceIdentityFiles.hasLostIdentity(home) {
            throw DeviceIdentityFiles.newIdentityRefused(home)
        }
        do { try home.create() } catch { throw .failure(error.description) }
        // The whole of it under the init lock: a command run meanwhile that finds the home unfinished (a key
        // without its certificate yet, no store yet) waits for it instead of calling the home damaged or
        // making the store itself and saying the store was gone (found by review).
        let (certificate, created) = try HomeLock.exclusively(home.initLockPath) { () throws(CLIError) in
            let (certificate, created) = try DeviceIdentityFiles.loadOrCreate(home: home, commonName: "groupsync",
                                                                              replacingLost: arguments.has("--new-identity"))
            do throws(HomeError) {
                if let name = arguments.value("--name") {
                    try home.writeFileAtomically(home.namePath, contents: name + "\n")
                } else if try home.readFile(home.namePath) == nil {
                    try home.writeFileAtomically(home.namePath, contents: hostName() + "\n")
                }
            } catch {
                throw .failure(error.description)
            }
            // Opening the store creates it, so the first `set` after `init` finds everything in place.
            _ = try DeviceContext.open(home: home, sayingIfMade: false, underInit: true)
            return (certificate, created)
        }
        if arguments.has("--new-identity") {
            Console.error("created device \(certificate.deviceID.short) in \(home.path), a new identity for its store: on your other devices, remove the old device and pair this one ('groupsync peer add \(certificate.deviceID) HOST:PORT')")
        } else {
            Console.error(created ? "created device \(certificate.deviceID.short) in \(home.path)" : "kept the existing device identity in \(home.path)")
        }
        Console.out(certificate.deviceID.description)
    }

    private static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "groupsync" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// `groupsync id`: prints this device's ID.
enum IdCommand: Command {
    static let name = "id"
    static let summary = "print this device's ID"
    static let help = """
        usage: groupsync id [--home DIR]

        Prints this device's ID: what a user gives to 'groupsync peer add' on their other devices.

        \(homeHelp)
        """
    static let flags = FlagSpec.with()

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws(CLIError) {
        _ = try arguments.positionals()
        Console.out(try DeviceContext.identity(home: invocation.home(arguments)).deviceID.description)
    }
}
