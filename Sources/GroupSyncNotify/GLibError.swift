import CNotify

/// A `GError` read into Swift and freed, with what the notifier needs to decide on it.
struct GLibError: Error, CustomStringConvertible {
    /// The message, without GDBus's `GDBus.Error:org.freedesktop…:` prefix.
    let message: String
    /// The D-Bus error name when the other end replied with an error (`org.freedesktop.DBus.Error.NameHasNoOwner`).
    let remoteName: String?
    /// The connection to the bus is closed: the bus went away under us.
    let isClosedConnection: Bool

    static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"

    /// Takes ownership of `error` (frees it). A `nil` error, which GLib should never give on failure, still
    /// becomes a readable message rather than a crash.
    init(taking error: UnsafeMutablePointer<GError>?, context: String) {
        guard let error else {
            self.init(message: "\(context) failed without an error message", remoteName: nil, isClosedConnection: false)
            return
        }
        defer { g_error_free(error) }
        var remote: String?
        if let name = g_dbus_error_get_remote_error(error) {
            remote = String(cString: name)
            g_free(name)
            _ = g_dbus_error_strip_remote_error(error)
        }
        let closed = error.pointee.domain == g_io_error_quark() && error.pointee.code == Int32(G_IO_ERROR_CLOSED.rawValue)
        let text = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
        self.init(message: text, remoteName: remote, isClosedConnection: closed)
    }

    init(message: String, remoteName: String?, isClosedConnection: Bool) {
        self.message = message
        self.remoteName = remoteName
        self.isClosedConnection = isClosedConnection
    }

    var description: String { remoteName.map { "\(message) (\($0))" } ?? message }
}

/// Takes a `g_malloc`ed C string into Swift and frees it.
func takeGString(_ pointer: UnsafeMutablePointer<gchar>?) -> String {
    guard let pointer else { return "" }
    defer { g_free(pointer) }
    return String(cString: pointer)
}
