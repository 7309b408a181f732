/// Why a peer ends a session, as carried by `goodbye` and `error`. An open set: a code this version does
/// not know is kept as its number (and the accompanying text still explains it), so newer peers can add
/// codes without breaking older ones.
public struct ReasonCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let unspecified = ReasonCode(rawValue: 0)
    /// `goodbye`: the device is shutting down or the user stopped syncing with this peer.
    public static let shutdown = ReasonCode(rawValue: 1)
    /// A frame or message could not be decoded.
    public static let malformed = ReasonCode(rawValue: 2)
    /// A message type in the required range that the receiver does not know.
    public static let unknownMessage = ReasonCode(rawValue: 3)
    /// A known message at a moment the protocol does not allow it (e.g. `changes` before `hello`).
    public static let unexpectedMessage = ReasonCode(rawValue: 4)
    /// The version ranges in the two `hello`s do not overlap.
    public static let versionMismatch = ReasonCode(rawValue: 5)
    /// The clocks differ by more than the bound entries may be ahead (5 minutes).
    public static let clockSkew = ReasonCode(rawValue: 6)
    /// Well-formed messages that contradict each other (an `ack` for nothing sent, a sequence out of range).
    public static let protocolViolation = ReasonCode(rawValue: 7)
    /// The sender's store failed; the session ends so nothing is acknowledged that is not durable.
    public static let storeFailure = ReasonCode(rawValue: 8)
    /// An entry too large to fit in one frame.
    public static let entryTooLarge = ReasonCode(rawValue: 9)

    public var description: String {
        switch self {
        case .unspecified: "unspecified"
        case .shutdown: "shutdown"
        case .malformed: "malformed"
        case .unknownMessage: "unknown-message"
        case .unexpectedMessage: "unexpected-message"
        case .versionMismatch: "version-mismatch"
        case .clockSkew: "clock-skew"
        case .protocolViolation: "protocol-violation"
        case .storeFailure: "store-failure"
        case .entryTooLarge: "entry-too-large"
        default: "code-\(rawValue)"
        }
    }
}
