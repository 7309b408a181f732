import Glibc

/// Which other processes hold a write lock on a file, read from `/proc/locks`: to name who a waiting write
/// waits for. Best effort: a holder in another PID namespace, or no `/proc`, gives an empty answer.
public enum LockHolders {
    /// `flock` locks (the store's writer lock), or POSIX record locks (SQLite's, on the log's shared index).
    public enum Kind: String, Sendable { case flock = "FLOCK", posix = "POSIX" }

    public struct Holder: Equatable, Sendable { public let pid: Int32; public let name: String }

    public static func processes(writeLocking path: String, kind: Kind) -> [Holder] {
        var info = stat()
        guard stat(path, &info) == 0, let table = readText("/proc/locks") else { return [] }
        let device = UInt64(info.st_dev)
        // As the kernel prints a device in /proc/locks: "%02x:%02x:%lu", major, minor, inode.
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff)
        let minor = (device & 0xff) | ((device >> 12) & ~0xff)
        let file = hex2(major) + ":" + hex2(minor) + ":" + String(info.st_ino)
        var pids: [Int32] = []
        for line in table.split(separator: "\n") {
            // "1: POSIX  ADVISORY  WRITE 1234 08:01:5678 120 120"; a waiter's line has "->" after the number.
            let fields = line.split(separator: " ")
            guard fields.count >= 6, fields[1] == kind.rawValue, fields[3] == "WRITE", fields[5] == file,
                  let pid = Int32(fields[4]), pid != getpid(), !pids.contains(pid) else { continue }
            pids.append(pid)
        }
        return pids.map { Holder(pid: $0, name: processName($0)) }
    }

    private static func hex2(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return digits.count < 2 ? "0" + digits : digits
    }

    private static func processName(_ pid: Int32) -> String {
        let name = readText("/proc/\(pid)/comm").map { String($0.split(separator: "\n").first ?? "") }
        return name.map { $0.isEmpty ? "?" : $0 } ?? "?"
    }

    private static func readText(_ path: String) -> String? { (try? Home.readTextFile(path)) ?? nil }
}
