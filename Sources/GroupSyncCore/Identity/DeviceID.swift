/// A device's identity: the SHA-256 digest of its certificate, shown the way Syncthing shows it.
///
/// Text form: the digest in base32 (52 characters), split into four runs of 13 each followed by a
/// Luhn mod-32 check character, then grouped by seven with dashes — 63 characters such as
/// `MFZWI3D-BONSGYC-...`. The check characters catch a mistyped ID before a pairing is refused
/// for a reason the user cannot see.
public struct DeviceID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The 32 raw bytes of the certificate's SHA-256 fingerprint.
    public let bytes: [UInt8]

    public static let byteCount = 32

    public init(bytes: [UInt8]) throws(DeviceIDError) {
        guard bytes.count == Self.byteCount else { throw .wrongLength(bytes.count) }
        self.bytes = bytes
    }

    /// Parses the text form; case, spaces and dashes are not significant.
    public init(parsing text: String) throws(DeviceIDError) {
        let cleaned = text.uppercased().filter { $0 != "-" && $0 != " " }
        guard cleaned.count == 56 else { throw .malformed(text) }
        let chars = Array(cleaned.utf8)
        var payload: [UInt8] = []
        for group in 0..<4 {
            let run = Array(chars[(group * 14)..<(group * 14 + 13)])
            guard let check = Base32.luhnCheck(run), check == chars[group * 14 + 13] else {
                throw .badCheckCharacter(text)
            }
            payload += run
        }
        guard let raw = Base32.decode(payload), raw.count == Self.byteCount else { throw .malformed(text) }
        self.bytes = raw
    }

    public var description: String {
        let encoded = Base32.encode(bytes)  // 52 characters
        var withChecks: [UInt8] = []
        for group in 0..<4 {
            let run = Array(encoded[(group * 13)..<(group * 13 + 13)])
            withChecks += run
            withChecks.append(Base32.luhnCheck(run)!)
        }
        var out = ""
        for (index, byte) in withChecks.enumerated() {
            if index > 0 && index % 7 == 0 { out.append("-") }
            out.append(Character(Unicode.Scalar(byte)))
        }
        return out
    }

    /// The first group, enough to tell devices apart in logs.
    public var short: String { String(description.prefix(7)) }

    public static func < (lhs: DeviceID, rhs: DeviceID) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}

public enum DeviceIDError: Error, Equatable, CustomStringConvertible {
    case wrongLength(Int)
    case malformed(String)
    case badCheckCharacter(String)

    public var description: String {
        switch self {
        case .wrongLength(let n): return "a device ID is 32 bytes, got \(n)"
        case .malformed(let text): return "'\(text)' is not a device ID (expected 8 groups of 7 base32 characters, like XXXXXXX-XXXXXXX-…)"
        case .badCheckCharacter(let text): return "device ID '\(text)' has a wrong check character: it was probably mistyped"
        }
    }
}
