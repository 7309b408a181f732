import GroupSyncCore

/// One write made on this device: what `set` and `delete` do, batched by `Store.write` into one commit.
public enum LocalWrite: Hashable, Sendable {
    case set(suite: String, key: String, value: Value)
    case delete(suite: String, key: String)

    public var suite: String {
        switch self { case .set(let suite, _, _), .delete(let suite, _): suite }
    }

    public var key: String {
        switch self { case .set(_, let key, _), .delete(_, let key): key }
    }

    /// The value written; `nil` for a delete (a tombstone).
    public var value: Value? {
        if case .set(_, _, let value) = self { return value }
        return nil
    }
}
