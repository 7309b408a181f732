import GroupSyncCore

/// A number written the way people and scripts write one: optional sign, digits with an optional decimal
/// point, an optional exponent (`12`, `-0.25`, `.5`, `1e3`). Swift's `Double(String)` also takes hex floats
/// (`0x10` is 16), `inf` and `nan`; a command line that took `--double 0x10` or `balance earn 0x1p4` as
/// sixteen would be guessing at what a typo meant.
enum DecimalNumber {
    static func parse(_ text: String) -> Double? {
        var bytes = text.utf8[...]
        if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let integerDigits = bytes.prefix(while: isDigit).count
        bytes = bytes.dropFirst(integerDigits)
        var fractionDigits = 0
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            fractionDigits = bytes.prefix(while: isDigit).count
            bytes = bytes.dropFirst(fractionDigits)
        }
        guard integerDigits + fractionDigits > 0 else { return nil }
        if let e = bytes.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            let exponentDigits = bytes.prefix(while: isDigit).count
            guard exponentDigits > 0 else { return nil }
            bytes = bytes.dropFirst(exponentDigits)
        }
        guard bytes.isEmpty, let value = Double(text), value.isFinite, !DecimalUnderflow.roundedToZero(text, value) else { return nil }
        return value
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
