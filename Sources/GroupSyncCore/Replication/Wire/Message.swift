/// The messages two peers exchange, one per frame. Layouts are in `MessageCodec` and `Protocol/PROTOCOL.md`.
public enum Message: Hashable, Sendable {
    /// The first message each side sends, without waiting for the other's.
    case hello(Hello)
    /// A contiguous stretch of the sender's history.
    case changes(ChangeBatch)
    /// "I have applied your history durably up to this sequence." One `ack` answers each `changes`, in order.
    case ack(sequence: Int64)
    /// "Send your history again from after this sequence": entries refused for clock drift are retried.
    case request(after: Int64)
    /// Keep-alive and clock probe; `millis` is the sender's physical clock.
    case ping(millis: Int64)
    /// Answers a ping: echoes its time and adds the responder's physical clock.
    case pong(echoMillis: Int64, millis: Int64)
    /// A graceful end.
    case goodbye(ReasonCode, String)
    /// The sender ends the session because of a failure it explains.
    case error(ReasonCode, String)

    public var type: MessageType {
        switch self {
        case .hello: .hello
        case .changes: .changes
        case .ack: .ack
        case .request: .request
        case .ping: .ping
        case .pong: .pong
        case .goodbye: .goodbye
        case .error: .error
        }
    }
}

/// The type byte of a frame. Types 0x01–0x7F are required: a receiver that does not know one must end the
/// session. Types 0x80–0xFF are optional: a receiver that does not know one ignores the frame, so later
/// versions can add hints (progress, statistics) without a version bump.
public enum MessageType: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case hello = 0x01, changes = 0x02, ack = 0x03, request = 0x04, ping = 0x05, pong = 0x06, goodbye = 0x07, error = 0x08

    public static let firstOptional: UInt8 = 0x80

    public var description: String {
        switch self {
        case .hello: "hello"
        case .changes: "changes"
        case .ack: "ack"
        case .request: "request"
        case .ping: "ping"
        case .pong: "pong"
        case .goodbye: "goodbye"
        case .error: "error"
        }
    }
}

/// Who is speaking and where the conversation can resume.
public struct Hello: Hashable, Sendable {
    /// The protocol versions the sender speaks.
    public var versions: ClosedRange<UInt32>
    /// A human name for logs and `status` ("Anna's laptop"); identity comes from the TLS certificate, never from here.
    public var deviceName: String
    /// The sender's store epoch: a new ID means the store was recreated and every watermark for it is void.
    public var storeID: String
    /// The sender's physical clock when it sent the hello, for a first estimate of the clock offset.
    public var physicalMillis: Int64
    /// How far the sender has read the receiver's history: "I have store `storeID` up to `sequence`".
    /// `nil` when it never read it.
    public var resume: Watermark?
    /// The sender's last sequence as it sends the hello; `nil` from a groupsync before it (an optional field
    /// after the others, which earlier readers ignore). A receiver whose watermark reaches it has caught up
    /// with the sender once, and knows what the sender knew (`ReplicaStore.hasCaughtUp`).
    public var head: Int64?

    /// Device names and store IDs are short labels; the bound keeps logs and status readable.
    public static let maxLabelBytes = 255

    public init(versions: ClosedRange<UInt32>, deviceName: String, storeID: String, physicalMillis: Int64, resume: Watermark?,
                head: Int64? = nil) {
        self.versions = versions
        self.deviceName = deviceName
        self.storeID = storeID
        self.physicalMillis = physicalMillis
        self.resume = resume
        self.head = head
    }
}

/// The part of the sender's history after sequence `after` up to and including `through`. Entries the
/// sender chose not to send (an echo of the receiver's own writes) leave holes, but `through` still moves
/// the receiver's watermark past them.
public struct ChangeBatch: Hashable, Sendable {
    public var after: Int64
    public var through: Int64
    /// In increasing sequence order, each in `after+1 ... through`.
    public var changes: [Change]

    public init(after: Int64, through: Int64, changes: [Change]) {
        self.after = after
        self.through = through
        self.changes = changes
    }
}
