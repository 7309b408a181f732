/// `HOST:PORT`, `[IPv6]:PORT` or `:PORT`, as `serve --listen` and `peer add` take them.
public struct ListenAddress: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    /// GroupSync's documented default port.
    public static let defaultPort: UInt16 = 22_100
    public static let `default` = ListenAddress(host: "0.0.0.0", port: defaultPort)

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    public init?(parsing text: String, defaultHost: String = "0.0.0.0") {
        var hostPart: Substring
        var portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portPart = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon else { return nil }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
        }
        // Digits only: `UInt16` would also take "+22100".
        guard !portPart.isEmpty, portPart.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let port = UInt16(portPart), port > 0 || portPart == "0" else { return nil }
        if hostPart.isEmpty { hostPart = Substring(defaultHost) }
        // A name or an address, nothing else: letters, digits and `.-_`, plus `:` and `%zone` inside an IPv6
        // address. Anything more (a newline, a space, a slash) would be stored and printed into one-line-per-peer
        // output, and no resolver takes it anyway.
        guard hostPart.utf8.allSatisfy(Self.isHostByte) else { return nil }
        self.init(host: String(hostPart), port: port)
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "%"): true
        default: false
        }
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
