/// What the shell must do after feeding the session an event, in order.
public enum SessionOutput: Equatable, Sendable {
    /// Write these bytes (one encoded frame) to the connection.
    case send([UInt8])
    /// Close the connection after writing what was sent before; the session is over.
    case close(CloseReason)
    /// One line for the log; every line starts `peer=<short id> event=<name>` for grepping.
    case log(String)
    /// Entries from the peer that won and are now stored: wake watchers, tell other sessions.
    case applied([Change])
}

/// Where a session is in its life.
public enum SessionPhase: String, Sendable, CustomStringConvertible {
    /// Created; `start` not called yet.
    case idle
    /// Our `hello` is sent; the peer's has not arrived.
    case handshaking
    /// Both `hello`s exchanged: changes flow both ways.
    case established
    /// Over; the session ignores every further event.
    case closed

    public var description: String { rawValue }
}

/// The fields `groupsync status` shows for one peer.
public struct SessionStatus: Equatable, Sendable {
    public var peer: DeviceID
    public var peerName: String?
    public var phase: SessionPhase
    public var negotiatedVersion: UInt32?
    /// The last time a batch from the peer was applied, or the peer confirmed it has all of ours.
    public var lastSyncMillis: Int64?
    /// The peer's clock minus ours, as last measured.
    public var clockOffsetMillis: Int64?
    /// Our changes the peer has not acknowledged (see `PeerSession.pendingCount`).
    public var pendingCount: Int
    /// Our head when that was counted; nil if it never was (then `pendingCount` means nothing).
    public var pendingCountedAtHead: Int64? = nil
    /// Why the session ended; nil while it runs.
    public var closeReason: CloseReason? = nil

    /// What `status` shows as the peer's last error: why the session ended, if that was a failure.
    public var failure: String? { closeReason.flatMap { $0.isFailure ? $0.description : nil } }

    /// `pendingCount` if it was ever counted.
    public var countedPending: Int? { pendingCountedAtHead == nil ? nil : pendingCount }

    /// What is pending for this peer now that our head is `head`: the count, plus every position written
    /// since it was taken (an upper bound, as the count is). For a session that has ended, whose count stopped
    /// when it did. Nil when it was never counted.
    public func pendingChanges(head: Int64) -> Int? {
        guard let counted = pendingCountedAtHead else { return nil }
        return pendingCount + Int(clamping: max(0, head - counted))
    }

    /// What is pending for a peer whose last status is `status` (nil when no session with it ever ran) now that
    /// our head is `head`: `pendingChanges(head:)`, or, never counted, every position, since the peer has
    /// acknowledged none of them (found by review: a device paired and not reached yet showed null, when its
    /// catch-up is everything).
    public static func pending(_ status: SessionStatus?, head: Int64) -> Int {
        status?.pendingChanges(head: head) ?? Int(clamping: max(0, head))
    }

    public var isConnected: Bool { phase == .handshaking || phase == .established }

    /// This status, with what it never learned taken from `earlier`, the peer's status from before: a session
    /// that ends before it synced (refused after the TLS handshake, a peer that unpaired us, a clock too far
    /// off) knows no last sync, offset or pending count, and must not make `status` forget them.
    public func carryingOver(from earlier: SessionStatus?) -> SessionStatus {
        guard let earlier else { return self }
        var merged = self
        if merged.lastSyncMillis == nil { merged.lastSyncMillis = earlier.lastSyncMillis }
        if merged.clockOffsetMillis == nil { merged.clockOffsetMillis = earlier.clockOffsetMillis }
        if merged.pendingCountedAtHead == nil {
            merged.pendingCount = earlier.pendingCount
            merged.pendingCountedAtHead = earlier.pendingCountedAtHead
        }
        return merged
    }
    public var isEstablished: Bool { phase == .established }
}

extension SessionStatus {
    /// What outlives a session that ended: its last sync, clock offset and pending count, as a store keeps
    /// them for `status` across daemon restarts (`Store.savedSyncStatuses`). In an extension, so that the
    /// memberwise initializer stays.
    public init(rememberedFor peer: DeviceID, lastSyncMillis: Int64?, clockOffsetMillis: Int64?, pendingCount: Int, pendingCountedAtHead: Int64?) {
        self.init(peer: peer, peerName: nil, phase: .closed, negotiatedVersion: nil, lastSyncMillis: lastSyncMillis,
                  clockOffsetMillis: clockOffsetMillis, pendingCount: pendingCount, pendingCountedAtHead: pendingCountedAtHead)
    }
}
