/// The clock of one replica. Pure: the physical time is passed in, so tests and the simulator can skew
/// and jump it at will.
///
/// A remote timestamp far ahead of our physical clock is **refused**, not clamped. Clamping would rewrite
/// the version of someone else's write, and two replicas clamping differently would never converge; a
/// refused entry is simply offered again by its sender later (replication does not acknowledge it), and is
/// accepted once our clock is within the bound. Without the bound, one device with its clock set to 2099
/// would pin every key it touches forever, because no honest write could ever be "later".
public struct HybridClock: Sendable {
    public private(set) var last: HLC
    /// How far ahead of our physical clock a remote timestamp may be. Default 5 minutes: far beyond what
    /// NTP-synced machines drift, short enough that a wrong clock cannot win for long.
    public var maxForwardDriftMillis: Int64

    public static let defaultMaxForwardDriftMillis: Int64 = 5 * 60 * 1000

    public init(last: HLC = .zero, maxForwardDriftMillis: Int64 = HybridClock.defaultMaxForwardDriftMillis) {
        self.last = last
        self.maxForwardDriftMillis = maxForwardDriftMillis
    }

    /// A timestamp for a local event (a write), strictly greater than any seen before.
    public mutating func tick(physicalMillis: Int64) -> HLC {
        if physicalMillis > last.wallMillis {
            last = HLC(wallMillis: physicalMillis, logical: 0)
        } else {
            last = advanceLogical(last)
        }
        return last
    }

    /// Folds a remote timestamp into the clock so later local writes order after it.
    public mutating func observe(_ remote: HLC, physicalMillis: Int64) throws(ClockError) {
        try check(remote, physicalMillis: physicalMillis)
        if remote > last { last = remote }
    }

    /// Whether a remote timestamp is acceptable now, without changing the clock.
    public func check(_ remote: HLC, physicalMillis: Int64) throws(ClockError) {
        let aheadBy = remote.wallMillis - physicalMillis
        if aheadBy > maxForwardDriftMillis {
            throw .tooFarAhead(remote: remote, aheadByMillis: aheadBy, boundMillis: maxForwardDriftMillis)
        }
    }

    private func advanceLogical(_ hlc: HLC) -> HLC {
        // 4 billion events in one millisecond cannot happen honestly; moving the wall time on keeps order.
        hlc.logical == .max ? HLC(wallMillis: hlc.wallMillis + 1, logical: 0) : HLC(wallMillis: hlc.wallMillis, logical: hlc.logical + 1)
    }
}

public enum ClockError: Error, Equatable, CustomStringConvertible {
    case tooFarAhead(remote: HLC, aheadByMillis: Int64, boundMillis: Int64)

    public var description: String {
        switch self {
        case let .tooFarAhead(remote, ahead, bound):
            "timestamp \(remote) is \(ahead) ms ahead of this device's clock (bound \(bound) ms): check the sender's clock; the entry will be accepted once the clocks agree"
        }
    }
}
