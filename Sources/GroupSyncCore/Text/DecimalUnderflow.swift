/// A decimal literal naming a number other than zero that a double can only hold as zero (`1e-400`, below
/// the smallest double): refused like one too large to hold (`1e400`), rather than stored as a 0 nobody
/// wrote (found by review: `set --double 1e-400` stored 0.0 and said nothing).
public enum DecimalUnderflow {
    /// Whether `value`, parsed from `literal`, is zero although a digit of the literal's mantissa is not.
    public static func roundedToZero(_ literal: String, _ value: Double) -> Bool {
        guard value == 0 else { return false }
        let mantissa = literal.utf8.prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
        return mantissa.contains { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") }
    }
}
