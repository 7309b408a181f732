/// Debian's python, which the recording notification server of the notify and CLI tests runs on: it has
/// python3-dbus and python3-gi, which a pyenv python first on PATH may lack.
public enum DebianPython {
    public static let path = "/usr/bin/python3"

    /// Whether it can import what the recording notification server needs.
    public static let hasDBusAndGLib: Bool = {
        let check = try? ChildProcess.run(path, ["-c", "import dbus, dbus.service, dbus.mainloop.glib; from gi.repository import GLib"])
        return check?.ending == .exited(0)
    }()
}
