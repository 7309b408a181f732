import Glibc

/// A lower bound on the real time that setting the wall clock back cannot lower, while the machine has not
/// restarted: the wall time read at some moment, plus the time the boot clock (`CLOCK_BOOTTIME`, which
/// counts suspended time and which no one can set) has counted since.
///
/// The balance keeps its day from going back before the store's hybrid clock, but that clock only moves
/// when something is written: set back the morning after a quiet evening, the wall clock would reopen the
/// evening's day. This floor moves with every balance operation instead, as long as the machine has not
/// restarted since (a restart starts the boot clock again, and only the hybrid clock holds then).
struct BootClockFloor: Equatable {
    /// `/proc/sys/kernel/random/boot_id`: a new value on every boot.
    let bootID: String
    let bootMillis: Int64
    let wallMillis: Int64

    static let metaName = "clock_floor"

    /// This moment, with the wall clock reading `wallMillis`; nil where the boot ID cannot be read.
    static func now(wallMillis: Int64) -> BootClockFloor? {
        guard let bootID = currentBootID() else { return nil }
        var time = timespec()
        guard clock_gettime(CLOCK_BOOTTIME, &time) == 0 else { return nil }
        return BootClockFloor(bootID: bootID, bootMillis: Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000, wallMillis: wallMillis)
    }

    /// The real time at `moment`, at least, going by this earlier record; nil after a restart.
    func floor(at moment: BootClockFloor) -> Int64? {
        guard moment.bootID == bootID, moment.bootMillis >= bootMillis else { return nil }
        return wallMillis.addingReportingOverflow(moment.bootMillis - bootMillis).partialValue
    }

    var encoded: [UInt8] { Array("\(bootID) \(bootMillis) \(wallMillis)".utf8) }

    /// A stored record; nil for anything else (a damaged row counts as none: the hybrid clock still holds).
    init?(decoding bytes: [UInt8]) {
        let fields = String(decoding: bytes, as: UTF8.self).split(separator: " ")
        guard fields.count == 3, let boot = Int64(fields[1]), let wall = Int64(fields[2]) else { return nil }
        self.init(bootID: String(fields[0]), bootMillis: boot, wallMillis: wall)
    }

    init(bootID: String, bootMillis: Int64, wallMillis: Int64) {
        self.bootID = bootID
        self.bootMillis = bootMillis
        self.wallMillis = wallMillis
    }

    private static func currentBootID() -> String? {
        guard let file = fopen("/proc/sys/kernel/random/boot_id", "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .filter { !$0.isWhitespace }
        return text.isEmpty ? nil : text
    }
}
