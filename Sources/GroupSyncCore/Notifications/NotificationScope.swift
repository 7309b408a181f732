/// Where a notification is shown: on this device only, or on every paired device.
public enum NotificationScope: String, CaseIterable, Hashable, Sendable {
    /// Never leaves the device: its record lives in a local-only suite that replication does not carry.
    case local
    /// Shown on every paired device: its record is an ordinary replicated entry.
    case all

    /// Nothing leaves the device unless the caller asks for it.
    public static let `default` = NotificationScope.local

    public init(parsing text: String) throws(NotificationError) {
        guard let scope = NotificationScope(rawValue: text) else { throw .unknownScope(text) }
        self = scope
    }

    /// The suite that holds the records of this scope.
    public var recordSuite: String {
        switch self {
        case .local: NotificationSuites.localRecords
        case .all: NotificationSuites.sharedRecords
        }
    }
}
