import CNotify

/// The few session-bus calls libnotify does not offer: who owns the notification name (the server instance),
/// activation, and a bounded "are you there". Each call carries its own timeout.
struct SessionBus: ~Copyable {
    private let connection: OpaquePointer

    /// Connecting fails fast without a bus: an address that leads nowhere, or no address and no X11 display
    /// for autolaunch.
    init() throws(GLibError) {
        var error: UnsafeMutablePointer<GError>?
        guard let connection = gs_session_bus(&error) else { throw GLibError(taking: error, context: "connecting to the session bus") }
        self.connection = connection
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(connection)) }

    /// A closed connection stays GLib's shared session connection for as long as anyone (libnotify's proxy)
    /// holds it, so it has to be noticed and let go of before a new bus can be reached.
    var isClosed: Bool { g_dbus_connection_is_closed(connection) != 0 }

    /// The bus daemon's own ID. Unique names (`:1.0`, `:1.1`, …) start again on a restarted bus at the same
    /// address, so only the two together tell one server instance from another.
    var guid: String { g_dbus_connection_get_guid(connection).map { String(cString: $0) } ?? "" }

    func nameOwner(_ name: String, timeoutMillis: Int32) throws(GLibError) -> String {
        var error: UnsafeMutablePointer<GError>?
        guard let owner = gs_bus_get_name_owner(connection, name, timeoutMillis, &error) else {
            throw GLibError(taking: error, context: "GetNameOwner")
        }
        return takeGString(owner)
    }

    func startService(_ name: String, timeoutMillis: Int32) throws(GLibError) {
        var error: UnsafeMutablePointer<GError>?
        guard gs_bus_start_service(connection, name, timeoutMillis, &error) != 0 else {
            throw GLibError(taking: error, context: "StartServiceByName")
        }
    }

    /// `GetCapabilities` of the server at `instance` ("body", "body-markup", "actions", …).
    func serverCapabilities(at instance: String, timeoutMillis: Int32) throws(GLibError) -> [String] {
        var error: UnsafeMutablePointer<GError>?
        guard let list = gs_notifications_server_capabilities(connection, instance, timeoutMillis, &error) else {
            throw GLibError(taking: error, context: "GetCapabilities")
        }
        defer { g_strfreev(list) }
        var capabilities: [String] = []
        var index = 0
        while let item = list[index] {
            capabilities.append(String(cString: item))
            index += 1
        }
        return capabilities
    }

    /// `GetServerInformation` of the server at `instance`: name, vendor, version.
    func serverInformation(at instance: String, timeoutMillis: Int32) throws(GLibError) -> (name: String, vendor: String, version: String) {
        var error: UnsafeMutablePointer<GError>?
        var name: UnsafeMutablePointer<gchar>?, vendor: UnsafeMutablePointer<gchar>?
        var version: UnsafeMutablePointer<gchar>?, specVersion: UnsafeMutablePointer<gchar>?
        guard gs_notifications_server_information(connection, instance, timeoutMillis, &name, &vendor, &version, &specVersion, &error) != 0 else {
            throw GLibError(taking: error, context: "GetServerInformation")
        }
        _ = takeGString(specVersion)
        return (takeGString(name), takeGString(vendor), takeGString(version))
    }
}
