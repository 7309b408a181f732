/// RFC 4648 base32 without padding, and the Luhn mod-32 check character used in device IDs.
enum Base32 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var buffer = 0, bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | Int(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[(buffer >> bits) & 31])
            }
            buffer &= (1 << bits) - 1
        }
        if bits > 0 { out.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return out
    }

    static func decode(_ chars: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        var buffer = 0, bits = 0
        for char in chars {
            guard let value = index(of: char) else { return nil }
            buffer = (buffer << 5) | value
            bits += 5
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((buffer >> bits) & 0xFF))
            }
            buffer &= (1 << bits) - 1
        }
        return out
    }

    static func index(of char: UInt8) -> Int? {
        switch char {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return Int(char - UInt8(ascii: "A"))
        case UInt8(ascii: "2")...UInt8(ascii: "7"): return Int(char - UInt8(ascii: "2")) + 26
        default: return nil
        }
    }

    /// Luhn mod N over the base32 alphabet, as Syncthing computes it.
    static func luhnCheck(_ run: [UInt8]) -> UInt8? {
        let n = alphabet.count
        var factor = 1, sum = 0
        for char in run {
            guard let codepoint = index(of: char) else { return nil }
            var addend = factor * codepoint
            factor = factor == 2 ? 1 : 2
            addend = addend / n + addend % n
            sum += addend
        }
        return alphabet[(n - sum % n) % n]
    }
}
