/// Which post a record holds: the posting device, its clock, and a per-ID counter.
///
/// A device remembers the stamp it last showed for an ID, and shows a record only when its stamp differs:
/// replication may deliver the same record again after every reconnect, and it must not pop again.
/// Two posts never share a stamp — different devices differ by `origin`, and one device's posts by
/// `generation`, even within one millisecond.
public struct NotificationStamp: Hashable, Comparable, Sendable {
    /// One more than the generation of the post it supersedes, as the posting device saw it.
    public var generation: Int64
    /// The posting device's wall clock, epoch milliseconds.
    public var postedAtMillis: Int64
    public var origin: DeviceID

    public init(generation: Int64, postedAtMillis: Int64, origin: DeviceID) {
        self.generation = generation
        self.postedAtMillis = postedAtMillis
        self.origin = origin
    }

    /// Later post first: by time between devices, which count generations independently (a local-scope post
    /// on one device and an all-scope post from another), so only the clock says which came last; by
    /// generation between two posts of one device, which counts them in order, so that its clock stepping back
    /// between them does not make the newer lose (found by review). An ID has at most two records (one per
    /// scope), so the order only ever picks between two.
    public static func < (lhs: NotificationStamp, rhs: NotificationStamp) -> Bool {
        if lhs.origin == rhs.origin, lhs.generation != rhs.generation { return lhs.generation < rhs.generation }
        if lhs.postedAtMillis != rhs.postedAtMillis { return lhs.postedAtMillis < rhs.postedAtMillis }
        if lhs.generation != rhs.generation { return lhs.generation < rhs.generation }
        return lhs.origin < rhs.origin
    }
}
