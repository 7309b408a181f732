import Glibc
import GroupSyncCore
import GroupSyncStore
import GroupSyncTransport

/// The device's identity on disk: `cert.pem` and `key.pem` in the home, both 0600. Created once by
/// `init`; every later command reads them back, so the device ID is stable for the life of the home.
enum DeviceIdentityFiles {
    /// Loads the identity, creating it first if the home has none. Serialized by an advisory lock so two
    /// `init`s racing on a fresh home cannot end with two different identities.
    static func loadOrCreate(home: Home, commonName: String) throws(CLIError) -> (DeviceCertificate, created: Bool) {
        let lockFD = open(home.path + "/.init.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lockFD >= 0 else { throw .failure("cannot lock \(home.path): \(String(cString: strerror(errno)))") }
        defer { close(lockFD) }
        flock(lockFD, LOCK_EX)
        defer { flock(lockFD, LOCK_UN) }
        if let existing = try load(home: home) { return (existing, false) }
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

    /// `nil` when the home has no identity yet; an error naming the file when one is damaged.
    static func load(home: Home) throws(CLIError) -> DeviceCertificate? {
        let certificate: String?, key: String?
        do {
            certificate = try home.readFile(home.certificatePath)
            key = try home.readFile(home.privateKeyPath)
        } catch {
            throw .failure(error.description)
        }
        switch (certificate, key) {
        case (nil, nil): return nil
        case (nil, _): throw .failure("\(home.certificatePath) is missing but \(home.privateKeyPath) exists; restore the certificate from a backup (a new one would change this device's ID)")
        case (_, nil): throw .failure("\(home.privateKeyPath) is missing but \(home.certificatePath) exists; restore the key from a backup (a new one would change this device's ID)")
        case let (certificate?, key?):
            do {
                return try DeviceCertificate(certificatePEM: certificate, privateKeyPEM: key)
            } catch {
                throw .failure("the device identity in \(home.path) (cert.pem, key.pem) is damaged: \(error). Restore both files from a backup")
            }
        }
    }
}
