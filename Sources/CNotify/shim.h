#include <libnotify/notify.h>
#include <gio/gio.h>

// Swift cannot call C variadic functions (g_object_set/get, g_variant_new/get). Each shim below is a fixed
// signature around one of them, so the Swift side never builds a GVariant or a varargs list itself.

// A NotifyNotification's "id" (a gint property) is the server's number for it: set before show() it becomes
// the Notify call's replaces_id; read after show() it is the number the server gave.
static inline void gs_notification_set_id(NotifyNotification *notification, guint32 id) {
    g_object_set(G_OBJECT(notification), "id", (gint)id, NULL);
}

static inline guint32 gs_notification_get_id(NotifyNotification *notification) {
    gint id = 0;
    g_object_get(G_OBJECT(notification), "id", &id, NULL);
    return (guint32)id;
}

// A new reference to the shared session bus connection (the one libnotify uses too), or NULL with error.
// GLib's default for that connection is to raise SIGTERM in the whole process when the bus goes away;
// a daemon must outlive its session bus, so that is switched off before anyone else gets the connection.
static inline GDBusConnection *gs_session_bus(GError **error) {
    GDBusConnection *connection = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, error);
    if (connection != NULL) g_dbus_connection_set_exit_on_close(connection, FALSE);
    return connection;
}

// org.freedesktop.DBus.GetNameOwner: the unique name (":1.42") owning `name`, to be g_free'd, or NULL with error.
static inline gchar *gs_bus_get_name_owner(GDBusConnection *connection, const gchar *name, gint timeout_ms, GError **error) {
    GVariant *reply = g_dbus_connection_call_sync(connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
        "org.freedesktop.DBus", "GetNameOwner", g_variant_new("(s)", name), G_VARIANT_TYPE("(s)"),
        G_DBUS_CALL_FLAGS_NONE, timeout_ms, NULL, error);
    if (reply == NULL) return NULL;
    gchar *owner = NULL;
    g_variant_get(reply, "(s)", &owner);
    g_variant_unref(reply);
    return owner;
}

// org.freedesktop.DBus.StartServiceByName: D-Bus activation of `name` (e.g. dunst from its .service file).
static inline gboolean gs_bus_start_service(GDBusConnection *connection, const gchar *name, gint timeout_ms, GError **error) {
    GVariant *reply = g_dbus_connection_call_sync(connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
        "org.freedesktop.DBus", "StartServiceByName", g_variant_new("(su)", name, (guint32)0), G_VARIANT_TYPE("(u)"),
        G_DBUS_CALL_FLAGS_NONE, timeout_ms, NULL, error);
    if (reply == NULL) return FALSE;
    g_variant_unref(reply);
    return TRUE;
}

// org.freedesktop.Notifications.GetCapabilities, sent to one server instance, bounded by `timeout_ms`: a
// NULL-terminated array to be g_strfreev'd, or NULL with error.
static inline gchar **gs_notifications_server_capabilities(GDBusConnection *connection, const gchar *destination,
        gint timeout_ms, GError **error) {
    GVariant *reply = g_dbus_connection_call_sync(connection, destination, "/org/freedesktop/Notifications",
        "org.freedesktop.Notifications", "GetCapabilities", NULL, G_VARIANT_TYPE("(as)"),
        G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout_ms, NULL, error);
    if (reply == NULL) return NULL;
    gchar **capabilities = NULL;
    g_variant_get(reply, "(^as)", &capabilities);
    g_variant_unref(reply);
    return capabilities;
}

// org.freedesktop.Notifications.GetServerInformation, sent to one server instance (a unique name):
// four strings to be g_free'd, or FALSE with error. Doubles as a bounded check that the server answers.
static inline gboolean gs_notifications_server_information(GDBusConnection *connection, const gchar *destination,
        gint timeout_ms, gchar **name, gchar **vendor, gchar **version, gchar **spec_version, GError **error) {
    GVariant *reply = g_dbus_connection_call_sync(connection, destination, "/org/freedesktop/Notifications",
        "org.freedesktop.Notifications", "GetServerInformation", NULL, G_VARIANT_TYPE("(ssss)"),
        G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout_ms, NULL, error);
    if (reply == NULL) return FALSE;
    g_variant_get(reply, "(ssss)", name, vendor, version, spec_version);
    g_variant_unref(reply);
    return TRUE;
}
