import GroupSyncCore
import GroupSyncStore

/// The bench's data: N keys of one suite, each holding an 80-byte string, as written by one device.
///
/// Seeding goes through `Store.apply` in batches (one transaction each), in process: writing 1M keys one
/// durable `set` at a time would take an hour and measure nothing the workloads care about.
enum Seeding {
    static let suite = "group.com.example.bench"
    static let valueBytes = 80

    static func key(_ index: Int) -> String {
        let digits = String(index)
        return "key-" + String(repeating: "0", count: max(0, 7 - digits.count)) + digits
    }

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// An 80-byte ASCII value that differs per key and per round: a prefix, then pseudo-random base64
    /// characters (6 bits of entropy each), so compressing frames gains what it would on real data and no
    /// more. `Benchmarks/scripts/yjs_peer.py` makes the very same bytes.
    static func value(_ index: Int, round: Int = 0) -> Value {
        var bytes = Array("r\(round)-k\(index)-".utf8)
        var x = UInt32(truncatingIfNeeded: index &* 2_654_435_761 &+ round &* 40_503 &+ 12_345) & 0x7fff_ffff
        while bytes.count < valueBytes {
            x = (x &* 1_103_515_245 &+ 12_345) & 0x7fff_ffff
            bytes.append(alphabet[Int((x >> 16) & 63)])
        }
        return .string(String(decoding: bytes, as: UTF8.self))
    }

    /// The entries of a store of `count` keys written by `origin`, all at one wall time.
    static func entries(_ range: Range<Int>, origin: DeviceID, wallMillis: Int64, round: Int = 0) -> [Entry] {
        range.map { index in
            Entry(suite: suite, key: key(index), value: value(index, round: round),
                  version: Version(hlc: HLC(wallMillis: wallMillis, logical: UInt32(index)), origin: origin))
        }
    }

    /// Fills each store with the same `count` entries written by `origin`.
    static func fill(_ stores: [Store], count: Int, origin: DeviceID, batch: Int = 5000) throws {
        let wall = Clock.wallMillis() - 60_000
        var start = 0
        while start < count {
            let end = min(count, start + batch)
            let entries = Self.entries(start..<end, origin: origin, wallMillis: wall)
            for store in stores { _ = try store.apply(entries) }
            start = end
        }
    }

    /// Marks two stores as having read each other's whole history, as after a completed sync: the next
    /// session between them sends only what changes from here on. A completed sync also leaves each
    /// sender's send horizon at its head; without it the first session takes the peer's resume point for
    /// a rewound history and resends everything (PROTOCOL.md §6.3), which landed in the "empty
    /// reconnect" rounds.
    static func markInSync(_ a: (BenchDevice, Store), _ b: (BenchDevice, Store)) throws {
        try a.1.setWatermark(Watermark(storeID: b.1.storeID, sequence: try b.1.lastSequence()), peer: b.0.id)
        try b.1.setWatermark(Watermark(storeID: a.1.storeID, sequence: try a.1.lastSequence()), peer: a.0.id)
        try a.1.setSendHorizon(try a.1.lastSequence(), peer: b.0.id)
        try b.1.setSendHorizon(try b.1.lastSequence(), peer: a.0.id)
    }
}
