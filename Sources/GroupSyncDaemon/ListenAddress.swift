/// `HOST:PORT`, `[IPv6]:PORT` or `:PORT`, as `serve --listen` and `peer add` take them.
public struct ListenAddress: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    /// GroupSync's documented default port.
    public static let defaultPort: UInt16 = 22_100
    /// Where `serve` listens by default: every interface, IPv4 and IPv6 (0.0.0.0 and [::], one socket each),
    /// so that a peer paired with either kind of address reaches the device.
    public static let `default` = ListenAddress(host: everyInterface, port: defaultPort)
    /// The host that stands for every interface of both families (resolved, it is both wildcards).
    public static let everyInterface = ""

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    public init?(parsing text: String, defaultHost: String = "0.0.0.0") {
        guard let parsed = try? Self(validating: text, defaultHost: defaultHost) else { return nil }
        self = parsed
    }

    /// Why a text is not an address, in words for the command line.
    public struct Problem: Error, CustomStringConvertible {
        public let description: String
    }

    /// `HOST:PORT`, `[IPv6]:PORT` (a link-local one with its `%interface`) or `:PORT` (`defaultHost`); without
    /// a port, `defaultPort` when given. The host must be an IPv4 address, a bracketed IPv6 address or a host
    /// name (labels of letters, digits, `-` and `_`, separated by dots): anything else is refused here, with
    /// the reason, rather than stored and failing at every dial (found by a networking review: `%:1`, `.:1`
    /// and `a..b:1` were taken).
    public init(validating text: String, defaultHost: String = "0.0.0.0", defaultPort: UInt16? = nil) throws(Problem) {
        var hostPart: Substring
        var portPart: Substring?
        var bracketed = false
        // `http://host:1` has two colons and was taken for an unbracketed IPv6 address (found by review).
        if let scheme = text.firstRange(of: "://") {
            let rest = text[scheme.upperBound...]
            throw Problem(description: "'\(text)' has a scheme ('\(text[..<scheme.lowerBound])://'); give HOST:PORT alone, for example \(rest.isEmpty ? "192.168.1.20:\(Self.defaultPort)" : String(rest))")
        }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw Problem(description: "'\(text)' opens '[' without closing it") }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw Problem(description: "'\(text)' has '\(rest)' after the address; give [IPv6]:PORT") }
                portPart = rest.dropFirst()
            }
            bracketed = true
        } else if let colon = text.lastIndex(of: ":") {
            guard text.firstIndex(of: ":") == colon else {
                throw Problem(description: "'\(text)' looks like an IPv6 address; put it in brackets: [\(text)]:\(Self.defaultPort)")
            }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
        } else {
            hostPart = Substring(text)
        }
        let port: UInt16
        if let portPart {
            // Digits only: `UInt16` would also take "+22100".
            guard !portPart.isEmpty, portPart.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let number = UInt16(portPart), number > 0 || portPart == "0" else {
                throw Problem(description: "'\(portPart)' is not a port (0 to 65535)")
            }
            port = number
        } else if let defaultPort {
            port = defaultPort
        } else {
            throw Problem(description: "'\(text)' has no port; give HOST:PORT (for example 192.168.1.20:\(Self.defaultPort))")
        }
        if hostPart.isEmpty { hostPart = Substring(defaultHost) }
        if hostPart.isEmpty && defaultHost == Self.everyInterface {
            // `:PORT` where every interface is the default: nothing to check.
        } else if bracketed {
            try Self.checkIPv6(hostPart)
        } else if !Self.isHostName(hostPart) {
            throw Problem(description: "'\(hostPart)' is not a host name or an IP address")
        }
        self.init(host: String(hostPart), port: port)
    }

    /// Hex digits, colons and dots (an IPv4 tail), then an optional `%interface`, which a link-local address
    /// (fe80::/10) needs: without it, every connect fails with a bare "Invalid argument".
    private static func checkIPv6(_ host: Substring) throws(Problem) {
        let address = host.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        let isAddressByte = { (byte: UInt8) -> Bool in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"),
                 UInt8(ascii: ":"), UInt8(ascii: "."): true
            default: false
            }
        }
        guard let numeric = address.first, numeric.contains(":"), numeric.utf8.allSatisfy(isAddressByte) else {
            throw Problem(description: "'\(host)' is not an IPv6 address")
        }
        if address.count == 2 {
            guard !address[1].isEmpty, address[1].utf8.allSatisfy(isLabelByte) else { throw Problem(description: "'\(address[1])' is not an interface name") }
        } else if ["fe8", "fe9", "fea", "feb"].contains(where: numeric.lowercased().hasPrefix) {
            throw Problem(description: "'\(host)' is a link-local address, which needs its interface: [\(host)%eth0]:PORT (see 'ip -6 addr')")
        }
    }

    /// An IPv4 address or a host name: dot-separated labels of letters, digits, `-` and `_`, none empty or
    /// beginning or ending with `-`; a final dot (a fully qualified name) is allowed.
    private static func isHostName(_ host: Substring) -> Bool {
        let name = host.hasSuffix(".") ? host.dropLast() : host
        guard !name.isEmpty, name.utf8.count <= 253 else { return false }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && label.first != "-" && label.last != "-" && label.utf8.allSatisfy(isLabelByte)
        }
    }

    private static func isLabelByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "_"): true
        default: false
        }
    }

    /// `HOST:PORT`, `[IPv6]:PORT`, or `:PORT` for every interface.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
