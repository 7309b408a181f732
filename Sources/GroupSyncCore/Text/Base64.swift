/// Standard base64 (RFC 4648, with padding), for `data` values on the command line and in JSON.
/// Kept here rather than taken from Foundation so the core stays free of it.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = Int(bytes[i])
            let b1 = i + 1 < bytes.count ? Int(bytes[i + 1]) : 0
            let b2 = i + 2 < bytes.count ? Int(bytes[i + 2]) : 0
            out.append(alphabet[b0 >> 2])
            out.append(alphabet[((b0 & 3) << 4) | (b1 >> 4)])
            out.append(i + 1 < bytes.count ? alphabet[((b1 & 15) << 2) | (b2 >> 6)] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? alphabet[b2 & 63] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Strict decoding: wrong characters, wrong length, bad padding or stray bits before it give `nil`, never a guess.
    public static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 4 * 3)
        var index = 0
        while index < chars.count {
            var quad = [Int](repeating: 0, count: 4)
            var padding = 0
            for j in 0..<4 {
                let c = chars[index + j]
                if c == UInt8(ascii: "=") {
                    // Padding only at the very end, at most two, never followed by data.
                    guard index + 4 == chars.count, j >= 2 else { return nil }
                    padding += 1
                } else {
                    guard padding == 0, let v = value(of: c) else { return nil }
                    quad[j] = v
                }
            }
            // The bits padding leaves over must be zero (RFC 4648 §3.5): "AB==" is not another spelling of "AA==",
            // which is what it would decode to, and reading it back would not give what was written.
            guard padding < 2 || quad[1] & 15 == 0, padding < 1 || quad[2] & 3 == 0 else { return nil }
            out.append(UInt8((quad[0] << 2) | (quad[1] >> 4)))
            if padding < 2 { out.append(UInt8(((quad[1] & 15) << 4) | (quad[2] >> 2))) }
            if padding < 1 { out.append(UInt8(((quad[2] & 3) << 6) | quad[3])) }
            index += 4
        }
        return out
    }

    private static func value(of c: UInt8) -> Int? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): Int(c - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): Int(c - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(c - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
