/// Writes JSON text. Doubles print in Swift's shortest round-trip form, which always carries a `.` or an
/// exponent (`7.0`, `0.25`, `1e-05`), so the int/double distinction survives a trip through text.
public enum JSONWriter {
    public static func string(for value: Value) -> String {
        var out = ""
        write(value, into: &out)
        return out
    }

    public static func write(_ value: Value, into out: inout String) {
        switch value {
        case .string(let s): writeString(s, into: &out)
        case .int(let i): out += String(i)
        case .double(let d): out += d.description
        case .bool(let b): out += b ? "true" : "false"
        case .date(let seconds): writeString(ISO8601.format(secondsSince1970: seconds), into: &out)
        case .data(let bytes): writeString(Base64.encode(bytes), into: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                write(item, into: &out)
            }
            out += "]"
        case .dictionary(let dict):
            out += "{"
            for (i, key) in ValueCodec.keysInCodeOrder(dict).enumerated() {
                if i > 0 { out += "," }
                writeString(key, into: &out)
                out += ":"
                write(dict[key]!, into: &out)
            }
            out += "}"
        }
    }

    public static func writeString(_ s: String, into out: inout String) {
        out += "\""
        // Most strings need no escape: copy them whole (appending scalar by scalar was the cost on hot paths).
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out += s
            out += "\""
            return
        }
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

/// A JSON object whose fields keep the order they were added in, for stable, readable CLI output.
public struct JSONObject {
    private var fields: [(String, String)] = []

    public init() {}

    public mutating func add(_ name: String, _ value: Value) { fields.append((name, JSONWriter.string(for: value))) }
    public mutating func add(_ name: String, _ string: String) { add(name, .string(string)) }
    public mutating func add(_ name: String, _ bool: Bool) { add(name, .bool(bool)) }
    public mutating func add(_ name: String, _ int: Int) { add(name, .int(Int64(int))) }
    public mutating func addRaw(_ name: String, json: String) { fields.append((name, json)) }

    public var text: String {
        var out = "{"
        for (i, (name, json)) in fields.enumerated() {
            if i > 0 { out += "," }
            JSONWriter.writeString(name, into: &out)
            out += ":" + json
        }
        return out + "}"
    }
}
