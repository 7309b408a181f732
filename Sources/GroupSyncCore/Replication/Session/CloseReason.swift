/// Why a session ended. Each case says what happened and, where someone can act, what to do.
public enum CloseReason: Error, Equatable, CustomStringConvertible {
    case malformedFrame(FrameError)
    case malformedMessage(MessageError)
    /// A known message at a moment the protocol does not allow it, such as `changes` before `hello`.
    case unexpectedMessage(MessageType, phase: SessionPhase)
    case versionMismatch(local: ClosedRange<UInt32>, peer: ClosedRange<UInt32>)
    /// The peer's clock minus ours exceeds the bound.
    case clockSkew(offsetMillis: Int64, boundMillis: Int64)
    case protocolViolation(String)
    case storeFailed(String)
    /// The store under the session was recreated (new store ID): the session's positions mean nothing now.
    case storeReplaced(was: String, now: String)
    case entryTooLarge(suite: String, key: String, bytes: Int, maxBytes: Int)
    /// Nothing received for this long.
    case peerSilent(millis: Int64)
    case peerSaidGoodbye(ReasonCode, String)
    case peerReportedError(ReasonCode, String)
    /// We end the session on purpose (daemon stopping, peer removed).
    case shutdown(String)
    /// The connection under the session ended without a goodbye (the peer closed it, or the network cut it):
    /// there is no one left to tell.
    case connectionLost(String)

    /// The code sent to the peer, or `nil` when the peer is told nothing (it left, or is the one who said why).
    public var code: ReasonCode? {
        switch self {
        case .malformedFrame: .malformed
        case .malformedMessage(.unknownType): .unknownMessage
        case .malformedMessage: .malformed
        case .unexpectedMessage: .unexpectedMessage
        case .versionMismatch: .versionMismatch
        case .clockSkew: .clockSkew
        case .protocolViolation: .protocolViolation
        case .storeFailed, .storeReplaced: .storeFailure
        case .entryTooLarge: .entryTooLarge
        case .shutdown: .shutdown
        case .peerSilent, .peerSaidGoodbye, .peerReportedError, .connectionLost: nil
        }
    }

    /// Whether the session ended on a failure someone should know of (`status` shows it as the peer's last
    /// error), rather than because one of the two devices chose to end it (a daemon stopping, a peer removed, a
    /// newer connection). A lost connection and a silent peer count: they say why the peer is not in sync.
    public var isFailure: Bool {
        switch self {
        case .shutdown, .peerSaidGoodbye: false
        default: true
        }
    }

    /// The last message of the session, if the peer should hear one.
    var farewell: Message? {
        guard let code else { return nil }
        if case .shutdown(let text) = self { return .goodbye(code, text) }
        return .error(code, description)
    }

    public var description: String {
        switch self {
        case .malformedFrame(let error): "bad framing: \(error)"
        case .malformedMessage(let error): "bad message: \(error)"
        case let .unexpectedMessage(type, phase):
            "'\(type)' is not allowed while the session is \(phase): the peer does not follow the protocol"
        case let .versionMismatch(local, peer):
            "no common protocol version (this device speaks \(local.lowerBound)...\(local.upperBound), the peer \(peer.lowerBound)...\(peer.upperBound)): update GroupSync on the older device"
        case let .clockSkew(offset, bound):
            "the clocks of the two devices differ by \(offset.magnitude) ms (the peer's is \(offset > 0 ? "ahead" : "behind")), more than the \(bound) ms allowed: turn on automatic (network) time on both devices"
        case .protocolViolation(let what): "protocol violation: \(what)"
        case .storeFailed(let what): "the store failed: \(what)"
        case let .storeReplaced(was, now): "the local store was recreated (store ID \(was) → \(now)): reconnect to sync it afresh"
        case let .entryTooLarge(suite, key, bytes, max):
            "entry \(suite)/\(key) takes \(bytes) bytes, more than a frame allows (\(max)): it cannot be replicated; shrink the value"
        case .peerSilent(let millis): "nothing received from the peer for \(millis) ms: it is gone or the network is down"
        case let .peerSaidGoodbye(code, text): "the peer left (\(code)): \(text)"
        case let .peerReportedError(code, text): "the peer ended the session (\(code)): \(text)"
        case .shutdown(let text): "closed here: \(text)"
        case .connectionLost(let text): text
        }
    }
}
