/// Two devices that dial each other at the same moment each end up with two connections to the other, and
/// each must keep the same one: if each kept the one it dialed, each would close the connection the other
/// kept, and they would redial each other for ever. The rule uses only what both sides know, who dialed.
public enum DuplicateConnection {
    /// Whether a new connection, dialed by `newInitiator`, replaces the live one dialed by `existingInitiator`.
    /// A connection dialed by the same device as the live one replaces it (it redialed: the old one is
    /// dead to it); otherwise the connection dialed by the lower device ID is the one both sides keep.
    public static func replaces(newInitiator: DeviceID, existingInitiator: DeviceID) -> Bool {
        newInitiator == existingInitiator || newInitiator < existingInitiator
    }
}
