import Glibc
import GroupSyncCore

/// Reads time zones from the system's zoneinfo files (`$TZDIR`, else `/usr/share/zoneinfo`) for the
/// pure `TZifTimeZone` parser. A POSIX rule such as `CET-1CEST,M3.5.0,M10.5.0/3` is accepted too, so
/// a machine without tzdata (or a test) can still name a zone with daylight-saving time.
public enum ZoneInfo {
    public static func calendar(named name: String, environment: [String: String] = [:]) throws(TimeZoneError) -> LocalCalendar {
        if name == "UTC" || name == "Etc/UTC" || name == "Z" { return .utc }
        // The policy is shared and each device reads the zone from its own zoneinfo: a link to the machine's own
        // setting would give each device its own days. Refused when set, and when a policy holds it anyway (set
        // by an earlier groupsync, or written into the suite directly), so that nothing counts days by it
        // silently (found by review).
        if let last = name.split(separator: "/").last, last == "localtime" || last == "posixrules" { throw .machineLocal(name) }
        let directory = environment["TZDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/share/zoneinfo"
        if isPlausibleName(name), let bytes = readFile(directory + "/" + name) {
            return LocalCalendar(rule: try TZifTimeZone(bytes: bytes))
        }
        if let rule = POSIXTimeZoneRule(parsing: name), rule.daylight != nil || name.contains(where: \.isNumber) {
            return LocalCalendar(rule: rule)
        }
        throw .unknownName(name)
    }

    /// An IANA name: letters, digits, `_+-`, separated by single slashes, never `.` or `..`.
    static func isPlausibleName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 255, !name.hasPrefix("/") else { return false }
        let components = name.split(separator: "/", omittingEmptySubsequences: false)
        return components.allSatisfy { part in
            !part.isEmpty && part != "." && part != ".." && part.unicodeScalars.allSatisfy { s in
                (s.value >= 0x30 && s.value <= 0x39) || (s.value >= 0x41 && s.value <= 0x5A) || (s.value >= 0x61 && s.value <= 0x7A)
                    || s == "_" || s == "+" || s == "-"
            }
        }
    }

    private static func readFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size < 1 << 20 else { return nil }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        return bytes
    }
}
