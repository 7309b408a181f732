#!/usr/bin/python3
"""A recording freedesktop notification server for GroupSync's tests.

Owns org.freedesktop.Notifications on the session bus (DBUS_SESSION_BUS_ADDRESS) and appends one JSON line per
call to the log file: Notify (app_name, replaces_id, summary, body, hints, expire_timeout, and the number it
returned) and CloseNotification. Numbers start at 1 for every server start, like dunst's, which is the hazard the
notifier must respect. Prints "ready <unique bus name>" on stdout once it owns the name; exits on SIGTERM.

Run it with Debian's /usr/bin/python3, which has python3-dbus and python3-gi (a pyenv python may not).
"""
import argparse
import json
import signal
import sys
import time

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

NAME = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"


def plain(value):
    """D-Bus values as JSON values. dbus.Boolean and dbus.Byte are ints in Python: Boolean is checked first."""
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (int, dbus.Byte)):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (dbus.Array, list, tuple, dbus.Struct)):
        return [plain(v) for v in value]
    if isinstance(value, (dbus.Dictionary, dict)):
        return {str(k): plain(v) for k, v in value.items()}
    return repr(value)


class Server(dbus.service.Object):
    def __init__(self, bus, log, refuse_summary=None, refusals=-1, capabilities=("body", "persistence"), slow_summary=None, slow_seconds=0.0):
        super().__init__(bus, PATH)
        self.log = log
        self.slow_summary = slow_summary
        self.slow_seconds = slow_seconds
        self.refuse_summary = refuse_summary
        self.refusals_left = refusals  # negative: every time
        self.capabilities = list(capabilities)
        self.next_id = 1
        self.issued = set()
        self.on_screen = set()

    def record(self, **fields):
        self.log.write(json.dumps(fields, sort_keys=True) + "\n")
        self.log.flush()

    @dbus.service.method(NAME, in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout):
        if self.refuse_summary is not None and str(summary) == self.refuse_summary and self.refusals_left != 0:
            self.refusals_left -= 1
            self.record(event="NotifyRefused", summary=str(summary))
            raise dbus.exceptions.DBusException("refused", name="org.freedesktop.Notifications.Error.Refused")
        if self.slow_summary is not None and str(summary) == self.slow_summary:
            # A server busy for a while before it answers: the caller is in the middle of its Notify call.
            self.record(event="NotifyHeld", summary=str(summary))
            time.sleep(self.slow_seconds)
        # The spec: a replaces_id this server gave out comes back as the answer. One it never gave (a number
        # from an earlier server instance) gets a fresh number here.
        if replaces_id != 0 and replaces_id in self.issued:
            number = int(replaces_id)
        else:
            number = self.next_id
            self.next_id += 1
            self.issued.add(number)
        self.on_screen.add(number)
        self.record(event="Notify", app_name=str(app_name), replaces_id=int(replaces_id), app_icon=str(app_icon),
                    summary=str(summary), body=str(body), actions=plain(actions), hints=plain(hints),
                    expire_timeout=int(expire_timeout), returned=number)
        return dbus.UInt32(number)

    @dbus.service.method(NAME, in_signature="u", out_signature="")
    def CloseNotification(self, number):
        known = int(number) in self.on_screen
        self.record(event="CloseNotification", id=int(number), known=known)
        if not known:
            # The spec: "If the notification no longer exists, an empty D-BUS Error message is sent back."
            raise dbus.exceptions.DBusException("no such notification", name="org.freedesktop.Notifications.Error.NotFound")
        self.on_screen.discard(int(number))
        self.NotificationClosed(dbus.UInt32(number), dbus.UInt32(3))

    @dbus.service.method(NAME, in_signature="", out_signature="as")
    def GetCapabilities(self):
        return self.capabilities

    @dbus.service.method(NAME, in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        return ("groupsync-recorder", "GroupSync tests", "1.0", "1.2")

    @dbus.service.signal(NAME, signature="uu")
    def NotificationClosed(self, number, reason):
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", required=True, help="file to append one JSON line per call to")
    parser.add_argument("--refuse-summary", help="answer Notify with a D-Bus error for this summary (a server that fails)")
    parser.add_argument("--refusals", type=int, default=-1, help="refuse that summary only this many times, then show it (default: always)")
    parser.add_argument("--slow-summary", help="answer Notify for this summary only after --slow-seconds (a busy server)")
    parser.add_argument("--slow-seconds", type=float, default=2.0, help="how long --slow-summary's Notify takes (default: 2)")
    parser.add_argument("--capabilities", default="body,persistence", help="what GetCapabilities answers, comma-separated")
    args = parser.parse_args()
    # A threaded parent (a test runner) may have started us with SIGTERM blocked; the test ends us with it.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    log = open(args.log, "a", encoding="utf-8")
    server = Server(bus, log, args.refuse_summary, args.refusals, [c for c in args.capabilities.split(",") if c],
                    args.slow_summary, args.slow_seconds)
    reply = bus.request_name(NAME, dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
    if reply != dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER:
        print("another server owns " + NAME, file=sys.stderr)
        return 2
    server.record(event="ready", instance=bus.get_unique_name())
    print("ready " + bus.get_unique_name(), flush=True)

    loop = GLib.MainLoop()
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
    loop.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
