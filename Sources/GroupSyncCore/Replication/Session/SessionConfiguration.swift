/// The knobs of a session. Defaults suit a handful of personal devices on a LAN or the internet;
/// tests shrink them.
public struct SessionConfiguration: Sendable {
    /// Protocol versions offered in `hello`.
    public var versions: ClosedRange<UInt32> = ProtocolVersion.supported
    /// At most this many entries per `changes` message (fewer when they would not fit in a frame). The
    /// receiver applies each in one transaction and one fsync, so this sets the fsyncs of a catch-up: 2,000
    /// (about 200 KB) made a 100k-key catch-up ≈20 % faster than 500, holding the store's write lock ≈7 ms.
    public var batchSize = 2000
    /// At most this many `changes` messages sent and not yet acknowledged: bounds what a slow peer makes
    /// us queue, while keeping the pipe full on a high-latency link.
    public var maxBatchesInFlight = 4
    /// A batch of echoes only (nothing the peer lacks) waits until it covers this many positions, or a
    /// keep-alive exchange, or a graceful goodbye (see `PeerSession+Sending`); the next batch with news
    /// covers them anyway. A session cut short meanwhile resends at most this many entries.
    public var maxDeferredEchoes: Int64 = 256
    /// Bound on a frame's length field, both ways.
    public var maxFrameBytes = Frame.defaultMaxBytes
    /// Which `changes` bodies are deflated when version 2 is agreed (see `ChangeBatchEncoder.Compression`).
    public var compression = ChangeBatchEncoder.Compression.default
    /// After this long without receiving anything, send a ping. Also the longest an idle session sleeps.
    public var keepAliveMillis: Int64 = 30_000
    /// After this long without receiving anything (three keep-alive periods), the peer is gone.
    public var deadAfterMillis: Int64 = 90_000
    /// A clock offset beyond this is logged once: writes will order by the wrong clock by that much.
    public var clockWarnMillis: Int64 = 30_000
    /// A clock offset beyond this ends the session: one side's entries would be refused by the other's
    /// `HybridClock` anyway, so replicating would only churn.
    public var clockRefuseMillis: Int64 = HybridClock.defaultMaxForwardDriftMillis
    /// After the first `sent` and `applied` line of a session, at most one of each per this long
    /// (`RoutineBatchLog`): a steady stream of writes does not make a line per write.
    public var routineLogIntervalMillis: Int64 = 60_000

    public init() {}
}
