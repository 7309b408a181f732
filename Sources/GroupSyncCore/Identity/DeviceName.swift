/// A device's human name ("Anna's laptop"): shown in `status` and logs, and sent in `hello`. Identity comes
/// from the TLS certificate, never from the name.
public enum DeviceName {
    /// The longest name in UTF-8 bytes: what a `hello` carries (`Hello.maxLabelBytes`), so that a name
    /// accepted here never makes every session of the device be refused as malformed.
    public static let maxBytes = Hello.maxLabelBytes

    /// Whether `name` can be a device's name: 1 to `maxBytes` bytes, no control characters.
    public static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maxBytes && !name.unicodeScalars.contains { $0.value < 0x20 }
    }

    /// `name` cut at a character boundary to what a `hello` carries: a home named before the bound matched
    /// the protocol's (256 bytes were accepted) still syncs.
    public static func sendable(_ name: String) -> String {
        guard name.utf8.count > maxBytes else { return name }
        var cut = ""
        for character in name {
            guard cut.utf8.count + character.utf8.count <= maxBytes else { break }
            cut.append(character)
        }
        return cut
    }
}
