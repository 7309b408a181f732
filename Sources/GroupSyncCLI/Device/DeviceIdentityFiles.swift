import Glibc
import GroupSyncCore
import GroupSyncStore
import GroupSyncTransport

/// The device's identity on disk: `cert.pem` and `key.pem` in the home, both 0600. Created once by
/// `init`; every later command reads them back, so the device ID is stable for the life of the home.
enum DeviceIdentityFiles {
    /// Loads the identity, creating it first if the home has none. Called by `init` while it holds the home's
    /// init lock (`Home.initLockPath`), so two `init`s racing on a fresh home cannot end with two different
    /// identities.
    ///
    /// `replacingLost`: the user asked for a new identity in a home that has a store but lost both identity
    /// files (`init --new-identity`); anywhere else that is refused.
    static func loadOrCreate(home: Home, commonName: String, replacingLost: Bool = false) throws(CLIError) -> (DeviceCertificate, created: Bool) {
        // A key without its certificate, in a home with no store yet, is an `init` that stopped between its
        // two writes (a full disk, a kill): its device ID was never printed, so no peer can have paired it,
        // and starting over is safe. A home with a store has been used, and a missing certificate there is
        // damage, which `load` reports.
        if Self.isInterruptedInit(home) { unlink(home.privateKeyPath) }
        if replacingLost {
            guard hasLostIdentity(home) else { throw newIdentityRefused(home) }
        } else if let existing = try load(home: home) {
            return (existing, false)
        }
        do {
            let certificate = try DeviceCertificate.generate(commonName: commonName)
            // The key first: a certificate without its key would be an identity nobody can use.
            try home.writeFileAtomically(home.privateKeyPath, contents: certificate.privateKeyPEM)
            try home.writeFileAtomically(home.certificatePath, contents: certificate.certificatePEM)
            return (certificate, true)
        } catch let error as HomeError {
            throw .failure(error.description)
        } catch {
            throw .failure("cannot create the device identity: \(error)")
        }
    }

    /// Names the file at fault. A new identity is never made in its place: that would change the device ID
    /// and every peer would have to pair again, so the advice is to restore the file.
    private static func damaged(home: Home, _ error: TransportError) -> String {
        let restore = "restore it from a backup (a new identity would change this device's ID, and every peer would have to pair again)"
        switch error {
        case .notAPEMPrivateKey(let detail):
            return "the private key \(home.privateKeyPath) is damaged (\(detail)); \(restore)"
        case .notAPEMCertificate(let detail):
            return "the certificate \(home.certificatePath) is damaged (\(detail)); \(restore)"
        case .certificateSignatureInvalid:
            return "the certificate \(home.certificatePath) is damaged (its signature does not verify); \(restore)"
        case .keyDoesNotMatchCertificate:
            return "the private key \(home.privateKeyPath) does not belong to the certificate \(home.certificatePath); restore the matching pair from a backup"
        default:
            return "the device identity in \(home.certificatePath) and \(home.privateKeyPath) cannot be read: \(error)"
        }
    }

    /// A key, no certificate and no store: what an `init` stopped between writing the key and the certificate
    /// leaves (it writes the key first, and the store only after both).
    private static func isInterruptedInit(_ home: Home) -> Bool {
        access(home.privateKeyPath, F_OK) == 0 && access(home.certificatePath, F_OK) != 0 && access(home.storePath, F_OK) != 0
    }

    /// A store, and neither identity file: the home was used by a device whose identity is gone (deleted, or
    /// a backup of the store alone put back). `init` wrote both files before the store, so this is no `init`
    /// in progress.
    static func hasLostIdentity(_ home: Home) -> Bool {
        access(home.storePath, F_OK) == 0 && access(home.certificatePath, F_OK) != 0 && access(home.privateKeyPath, F_OK) != 0
    }

    /// `init --new-identity` where it does not fit: bad usage.
    static func newIdentityRefused(_ home: Home) -> CLIError {
        .usage("--new-identity is only for a home that holds a store but lost both \(home.certificatePath) and \(home.privateKeyPath); this one has \(access(home.storePath, F_OK) == 0 ? "its identity, or part of it" : "no store"): run 'groupsync init' without it")
    }

    /// `nil` when the home has no identity yet; an error naming the file when one is damaged, or both when a
    /// used home lost them. A new identity in their place would make another device of it, silently: `init`
    /// used to do just that and print "created device …" (found by review).
    static func load(home: Home) throws(CLIError) -> DeviceCertificate? {
        let certificate: String?, key: String?
        do {
            certificate = try home.readFile(home.certificatePath)
            key = try home.readFile(home.privateKeyPath)
        } catch {
            throw .failure(error.description)
        }
        switch (certificate, key) {
        case (nil, nil) where hasLostIdentity(home):
            throw .failure("\(home.path) holds a store but no device identity: \(home.certificatePath) and \(home.privateKeyPath) are both missing. "
                + "Restore both from a backup to keep this device's ID; or run 'groupsync init --new-identity' to go on as a new device with this store's data "
                + "(its ID changes: on your other devices, remove the old ID and pair the new one)")
        case (nil, nil): return nil
        case (nil, _) where isInterruptedInit(home):
            throw .failure("\(home.certificatePath) is missing but \(home.privateKeyPath) exists, and there is no store yet: 'groupsync init' was interrupted; run it again")
        case (nil, _): throw .failure("\(home.certificatePath) is missing but \(home.privateKeyPath) exists; restore the certificate from a backup (a new one would change this device's ID)")
        case (_, nil): throw .failure("\(home.privateKeyPath) is missing but \(home.certificatePath) exists; restore the key from a backup (a new one would change this device's ID)")
        case let (certificate?, key?):
            do {
                return try DeviceCertificate(certificatePEM: certificate, privateKeyPEM: key)
            } catch {
                throw .failure(damaged(home: home, error))
            }
        }
    }
}
