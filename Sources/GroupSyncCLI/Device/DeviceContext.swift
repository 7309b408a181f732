import Glibc
import GroupSyncCore
import GroupSyncDaemon
import GroupSyncStore
import GroupSyncTransport
import Synchronization

/// An initialized home with its identity and open store: what every command but `init` works in.
struct DeviceContext {
    let home: Home
    let certificate: DeviceCertificate
    let store: Store

    var deviceID: DeviceID { certificate.deviceID }

    /// The identity of an initialized home, after checking that the home is one and is private: a home others
    /// can read holds a key others may have copied. What `id` needs; `open` goes on to the store.
    ///
    /// A home found unfinished (nothing in it yet, or a key without its certificate) may be one an `init` is
    /// making right now: looked at again once no `init` holds the home's init lock.
    static func identity(home: Home, underInit: Bool = false) throws(CLIError) -> DeviceCertificate {
        do {
            return try identityAsFound(home: home)
        } catch {
            guard !underInit, home.exists else { throw error }
            HomeLock.awaitRelease(home.initLockPath)
            return try identityAsFound(home: home)
        }
    }

    private static func identityAsFound(home: Home) throws(CLIError) -> DeviceCertificate {
        guard home.exists, home.hasIdentityOrStore else { throw .usage(HomeError.notInitialized(path: home.path).description) }
        do { try home.checkPrivate() } catch { throw .failure(error.description) }
        guard let certificate = try DeviceIdentityFiles.load(home: home) else {
            throw .usage(HomeError.notInitialized(path: home.path).description)
        }
        return certificate
    }

    /// Opens the home's store, making it if there is none. Made by any command but `init` (the store moved
    /// aside or removed with its log), it is said on stderr: a read that answered from a new, empty store
    /// without a word let the user believe their data was gone, or never there (found by review).
    ///
    /// `underInit`: opened by `init`, which holds the init lock that other commands wait on.
    static func open(home: Home, sayingIfMade: Bool = true, underInit: Bool = false) throws(CLIError) -> DeviceContext {
        let certificate = try identity(home: home, underInit: underInit)
        // No store yet: an `init` may be about to make it (after the identity). Made here instead, it would be
        // said to have been gone.
        if !underInit && access(home.storePath, F_OK) != 0 { HomeLock.awaitRelease(home.initLockPath) }
        let store: Store
        // A daemon running on a store of an earlier schema is an earlier groupsync's (this one raises the
        // version when it starts): raising it under that daemon would make it refuse every new connection.
        // It is left as it is, and the user told why.
        let daemonRuns = DaemonLock.isHeld(home: home)
        do {
            store = try Store(path: home.storePath, device: certificate.deviceID, raisingSchemaVersion: !daemonRuns)
        } catch {
            throw .failure(error.description)
        }
        if sayingIfMade && store.madeTheFile {
            Console.error("groupsync: there was no store in \(home.path): started a new, empty one (paired devices refill it once the daemon runs)")
        }
        if store.isOnAnEarlierSchema {
            Console.error("groupsync: the daemon running in \(home.path) is an earlier groupsync's; restart it (groupsync serve) to run this one")
        }
        // A write that tells no one is stored all the same, but the daemon and every `watch` learn of it only at
        // the next change that does: said, once, rather than nothing (found by review).
        let told = Atomic<Bool>(false)
        let signal = ChangeSignal(home: home) { problem in
            guard !told.exchange(true, ordering: .relaxed) else { return }
            Console.error("groupsync: note: stored, but the daemon and watchers were not told (\(problem)); they see it at the next change that reaches them")
        }
        store.didCommit = { signal.post() }
        return DeviceContext(home: home, certificate: certificate, store: store)
    }
}

extension StoreError {
    /// Bad names and values are the caller's input; everything else is the environment failing.
    var asCLIError: CLIError {
        if case .invalidEntry(let why) = self { return .badInput(why) }
        return .failure(description)
    }
}
