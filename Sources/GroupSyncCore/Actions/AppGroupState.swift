/// The keys actions keep their effects under, in the App Group's own suite.
///
/// Selections are opaque tokens GroupSync cannot combine, so blocking is kept as one key per blocked
/// selection (`SelectionBlocks`, `groupsync.block.<id>`), from which the list apps read
/// (`blockedSelectionIds`) is derived, beside the library's `isBlockingAll`; monitors and pending
/// notification requests get one key each, so two devices acting on different ones never collide.
public enum AppGroupState {
    public static let selectionIDs = "familyActivitySelectionIds"
    public static let blockedSelectionIDs = "blockedSelectionIds"
    public static let currentBlockedSelection = "currentBlockedSelection"
    public static let isBlockingAll = "isBlockingAll"
    public static let lastBlockUpdate = "lastBlockUpdate"
    public static let fallbackShieldConfiguration = "shieldConfiguration"
    public static let notificationPrefix = "groupsync.notification."
    public static let removeAllDeliveredAt = "groupsync.notifications.removeAllDeliveredAt"
    public static let monitorPrefix = "groupsync.monitor."

    public static func notificationKey(_ identifier: String) -> String { notificationPrefix + identifier }
    /// The identifier a key names if it is a `notificationKey`; nil for any other key.
    public static func notificationIdentifier(ofKey key: String) -> String? { EntryName.remainder(of: key, after: notificationPrefix) }
    public static func monitorKey(_ activity: String) -> String { monitorPrefix + activity }
    public static func shieldConfiguration(_ shieldID: String) -> String { "shieldConfiguration_\(shieldID)" }
}
