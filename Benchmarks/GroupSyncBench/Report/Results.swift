import Foundation

/// A target from issue #7, checked against a row's medians.
struct Target {
    let text: String
    /// Nil when the figures needed are missing; else whether it is met and, if not, by how much.
    let check: (Row) -> (met: Bool, miss: String?)?

    /// GroupSync's figure at most `limit`.
    static func atMost(_ limit: Double, _ text: String) -> Target {
        Target(text: text) { row in
            guard let value = row.groupsync else { return nil }
            return value <= limit ? (true, nil) : (false, "\(Format.ratio(value / limit)) the limit (\(Format.value(value, row.unit)) vs \(Format.value(limit, row.unit)))")
        }
    }

    /// GroupSync's figure at least `limit`.
    static func atLeast(_ limit: Double, _ text: String) -> Target {
        Target(text: text) { row in
            guard let value = row.groupsync else { return nil }
            return value >= limit ? (true, nil) : (false, "\(Format.value(value, row.unit)) is \(Format.percent(1 - value / limit)) short of \(Format.value(limit, row.unit))")
        }
    }

    /// GroupSync/peer at most `limit` (the peer measured in the same run).
    static func ratioAtMost(_ limit: Double, _ text: String) -> Target {
        Target(text: text) { row in
            guard let ratio = row.ratio else { return nil }
            return ratio <= limit ? (true, nil) : (false, "ratio \(Format.ratio(ratio)) vs at most \(Format.ratio(limit))")
        }
    }

    /// Both must hold.
    static func all(_ targets: [Target], _ text: String) -> Target {
        Target(text: text) { row in
            var misses: [String] = []
            for target in targets {
                guard let result = target.check(row) else { return nil }
                if !result.met { misses.append(result.miss ?? target.text) }
            }
            return misses.isEmpty ? (true, nil) : (false, misses.joined(separator: "; "))
        }
    }
}

/// One line of the results table: a GroupSync figure, its peer's from the same run, and the target.
struct Row {
    var workload: String
    var metric: String
    var unit: String
    var groupsyncRuns: [Double]
    var peerName: String?
    var peerRuns: [Double] = []
    var target: Target?
    var how: String
    var note: String?
    /// For rows where a lower figure is better (times, bytes); false for rates (ratio is then peer/GroupSync
    /// so that > 1 always means GroupSync is worse).
    var lowerIsBetter = true

    var groupsync: Double? { groupsyncRuns.isEmpty ? nil : Stats.median(groupsyncRuns) }
    var peer: Double? { peerRuns.isEmpty ? nil : Stats.median(peerRuns) }
    /// > 1: GroupSync is worse than the peer by that factor.
    var ratio: Double? {
        guard let g = groupsync, let p = peer, g > 0, p > 0 else { return nil }
        return lowerIsBetter ? g / p : p / g
    }
    var verdict: (met: Bool, miss: String?)? { target?.check(self) }
}

/// Everything one run produced: rows, skipped peers and workloads, chart series, the machine's state.
final class Results {
    var rows: [Row] = []
    var notes: [String] = []
    var skipped: [(what: String, why: String)] = []
    /// Series for the catch-up chart: name -> points (store size, milliseconds, bytes).
    var series: [String: [(n: Int, millis: Double, bytes: Double?)]] = [:]
    var environment: [String: Any] = [:]
    /// Extra Markdown sections (e.g. the delta grid), placed after the main table.
    var sections: [String] = []
    var extra: [String: Any] = [:]

    func add(_ row: Row) {
        rows.append(row)
        let value = row.groupsync.map { Format.value($0, row.unit) } ?? "—"
        let peer = row.peer.map { " | \(row.peerName ?? "peer") \(Format.value($0, row.unit))" } ?? ""
        Progress.say("  \(row.metric): \(value)\(peer)")
    }

    func skip(_ what: String, _ why: String) {
        skipped.append((what, why))
        Progress.say("  skipped \(what): \(why)")
    }

    func point(_ series: String, n: Int, millis: Double, bytes: Double?) {
        self.series[series, default: []].append((n, millis, bytes))
    }

    // MARK: Output

    var json: [String: Any] {
        func number(_ value: Double?) -> Any { value.map { $0.isFinite ? $0 : NSNull() as Any } ?? NSNull() }
        return [
            "environment": environment,
            "rows": rows.map { row -> [String: Any] in
                let verdict = row.verdict
                return [
                    "workload": row.workload, "metric": row.metric, "unit": row.unit,
                    "groupsync": number(row.groupsync), "groupsyncRuns": row.groupsyncRuns,
                    "peer": row.peerName ?? NSNull(), "peerValue": number(row.peer), "peerRuns": row.peerRuns,
                    "ratio": number(row.ratio), "target": row.target?.text ?? NSNull(),
                    "met": verdict.map { $0.met as Any } ?? NSNull(), "miss": verdict?.miss ?? NSNull(),
                    "how": row.how, "note": row.note ?? NSNull(),
                ]
            },
            "skipped": skipped.map { ["what": $0.what, "why": $0.why] },
            "notes": notes,
            "chart": series.mapValues { points in points.map { ["n": $0.n, "millis": $0.millis, "bytes": number($0.bytes)] } },
            "extra": extra,
        ]
    }

    var table: String {
        var lines = ["| workload | metric | GroupSync | peer | peer value | ratio | target | met? |",
                     "|---|---|---|---|---|---|---|---|"]
        for row in rows {
            let verdict = row.verdict
            let met = verdict.map { $0.met ? "yes" : "**no**" } ?? "—"
            lines.append("| \(row.workload) | \(row.metric) | \(row.groupsync.map { Format.value($0, row.unit) } ?? "—") | \(row.peerName ?? "—") | \(row.peer.map { Format.value($0, row.unit) } ?? "—") | \(row.ratio.map { Format.ratio($0) } ?? "—") | \(row.target?.text ?? "—") | \(met) |")
        }
        return lines.joined(separator: "\n")
    }

    func markdown(analysis: String?) -> String {
        var out = "# GroupSync benchmark results\n\n"
        let env = environment
        out += "Run \(env["date"] ?? "?") on \(env["cpu"] ?? "?") (\(env["cores"] ?? "?") cores), commit `\(env["commit"] ?? "?")`, mode **\(env["mode"] ?? "?")**"
        out += ", N = \(env["n"] ?? "?") keys of \(Seeding.valueBytes)-byte values, \(env["runs"] ?? "?") runs per figure (medians shown).\n"
        out += "Load average at start \(env["loadStart"] ?? "?"), at end \(env["loadEnd"] ?? "?").\n"
        if let shared = env["sharedMachineNote"] as? String { out += "\n> \(shared)\n" }
        out += "\nRatio > 1 means GroupSync is worse than the peer by that factor (time, bytes: GroupSync ÷ peer; rates: peer ÷ GroupSync).\n\n"
        out += table + "\n"
        let misses = rows.compactMap { row -> String? in
            guard let verdict = row.verdict, !verdict.met else { return nil }
            return "- **\(row.workload) — \(row.metric)**: \(verdict.miss ?? "missed") (target: \(row.target?.text ?? ""))."
        }
        for section in sections { out += "\n" + section }
        out += "\n## Misses\n\n" + (misses.isEmpty ? "None.\n" : misses.joined(separator: "\n") + "\n")
        if !skipped.isEmpty {
            out += "\n## Skipped\n\n" + skipped.map { "- \($0.what): \($0.why)" }.joined(separator: "\n") + "\n"
        }
        out += "\n## How each figure was measured\n\n"
        for row in rows {
            out += "- **\(row.workload) — \(row.metric)**: \(row.how)" + (row.note.map { " \($0)" } ?? "") + "\n"
        }
        if !notes.isEmpty { out += "\n## Notes\n\n" + notes.map { "- \($0)" }.joined(separator: "\n") + "\n" }
        if let analysis { out += "\n" + analysis }
        return out
    }
}

/// Human formatting of the figures.
enum Format {
    static func value(_ value: Double, _ unit: String) -> String {
        switch unit {
        case "ms": return number(value, digits: value < 1 ? 3 : value < 100 ? 2 : 0) + " ms"
        case "s": return number(value, digits: value < 10 ? 3 : 1) + " s"
        case "bytes": return bytes(value)
        case "/s": return grouped(Int(value.rounded())) + "/s"
        case "MB": return number(value, digits: 1) + " MB"
        case "count": return grouped(Int(value.rounded()))
        default: return number(value, digits: 2) + " " + unit
        }
    }

    static func bytes(_ value: Double) -> String {
        if value < 10_000 { return grouped(Int(value.rounded())) + " B" }
        if value < 10_000_000 { return number(value / 1000, digits: 1) + " KB" }
        return number(value / 1_000_000, digits: 1) + " MB"
    }

    static func ratio(_ value: Double) -> String { number(value, digits: value < 10 ? 2 : 1) + "×" }
    static func percent(_ value: Double) -> String { number(value * 100, digits: 0) + "%" }

    static func number(_ value: Double, digits: Int) -> String {
        guard value.isFinite else { return "—" }
        return String(format: "%.\(digits)f", value)
    }

    static func grouped(_ value: Int) -> String {
        let digits = String(abs(value))
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out += "," }
            out.append(c)
        }
        return (value < 0 ? "-" : "") + out
    }
}
