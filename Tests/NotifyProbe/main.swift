// notify-probe: a LibnotifyNotifier driven by JSON lines on stdin, answering with JSON lines on stdout.
//
// libnotify talks to GLib's one shared session-bus connection per process, so a test that needs a private
// bus (or two devices on two buses, or no bus at all) runs the notifier in this process, started under
// `dbus-run-session` or with a chosen DBUS_SESSION_BUS_ADDRESS.
//
// First line out: {"bus": "<DBUS_SESSION_BUS_ADDRESS or empty>"}. Then one answer per request:
//   {"op":"availability"}                                   → {"ok":true,"instance":…,"name":…} | {"ok":false,"kind":"unavailable","error":…}
//   {"op":"show","title":…,"body":…,"level":…,"replacing":{"number":N,"instance":…}?}
//                                                           → {"ok":true,"number":N,"instance":…}
//   {"op":"close","number":N,"instance":…}                  → {"ok":true,"result":"closed"|"alreadyGone"|"serverChanged"}
// Every answer carries "ms", the time the call took. End of input ends the probe.
import Glibc
import GroupSyncCore
import GroupSyncNotify

func send(_ object: JSONObject) {
    let line = Array((object.text + "\n").utf8)
    var written = 0
    while written < line.count {
        let n = line[written...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if n <= 0 { exit(1) }
        written += n
    }
}

func millisNow() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
}

func string(_ fields: [String: Value], _ name: String) -> String? {
    if case .string(let s)? = fields[name] { return s }
    return nil
}

func number(_ fields: [String: Value], _ name: String) -> UInt32? {
    if case .int(let i)? = fields[name] { return UInt32(exactly: i) }
    return nil
}

func answer(_ request: [String: Value], notifier: LibnotifyNotifier) -> JSONObject {
    var out = JSONObject()
    func failure(_ error: NotifierError) {
        out.add("ok", false)
        switch error {
        case .unavailable(let reason): out.add("kind", "unavailable"); out.add("error", reason)
        case .failed(let reason): out.add("kind", "failed"); out.add("error", reason)
        }
    }
    switch string(request, "op") {
    case "availability":
        switch notifier.availability() {
        case .available(let server):
            out.add("ok", true)
            out.add("instance", server.instance)
            out.add("name", server.name)
        case .unavailable(let reason):
            failure(.unavailable(reason))
        }
    case "show":
        do throws(NotifierError) {
            let level = try? NotificationLevel(parsing: string(request, "level") ?? "active")
            let content = NotificationContent(title: string(request, "title") ?? "", body: string(request, "body") ?? "", level: level ?? .active)
            var replacing: ServerNotification?
            if case .dictionary(let r)? = request["replacing"], let n = number(r, "number"), let instance = string(r, "instance") {
                replacing = ServerNotification(number: n, serverInstance: instance)
            }
            let shown = try notifier.show(content, replacing: replacing)
            out.add("ok", true)
            out.add("number", Int(shown.number))
            out.add("instance", shown.serverInstance)
        } catch {
            failure(error)
        }
    case "close":
        do throws(NotifierError) {
            let shown = ServerNotification(number: number(request, "number") ?? 0, serverInstance: string(request, "instance") ?? "")
            let result = try notifier.close(shown)
            out.add("ok", true)
            out.add("result", "\(result)")
        } catch {
            failure(error)
        }
    default:
        out.add("ok", false)
        out.add("kind", "usage")
        out.add("error", "unknown op")
    }
    return out
}

var hello = JSONObject()
hello.add("bus", getenv("DBUS_SESSION_BUS_ADDRESS").map { String(cString: $0) } ?? "")
send(hello)

let notifier = LibnotifyNotifier(appName: "GroupSync")
while let line = readLine() {
    let started = millisNow()
    var out: JSONObject
    if case .dictionary(let request)? = try? JSONParser.parse(line) {
        out = answer(request, notifier: notifier)
    } else {
        out = JSONObject()
        out.add("ok", false)
        out.add("kind", "usage")
        out.add("error", "not a JSON object")
    }
    out.add("ms", Int(millisNow() - started))
    send(out)
}
