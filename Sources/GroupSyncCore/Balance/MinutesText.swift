/// Minutes as a person reads them: `5`, `12.5`, `0.25`, `8.92` — to the hundredth at most, but for an amount
/// too small for a hundredth (`0.001`), which is not shown as nothing. Shares of a balance
/// split three ways are not round, and "8.916666666666666 min left" reads as a fault, not as precision.
public enum MinutesText {
    public static func format(_ minutes: Double) -> String {
        guard minutes.isFinite, minutes.magnitude < 1e15 else { return String(minutes) }
        let hundredths = Int64((minutes * 100).rounded())
        let whole = String(hundredths.magnitude / 100)
        let fraction = hundredths.magnitude % 100
        let sign = hundredths < 0 ? "-" : ""
        // An amount under half a hundredth is not nothing: "spent 0 of 0 min" for a spend of 0.001 read as
        // a spend that did not happen. It gets the digits it needs, down to the balance's unit (1 ms).
        if hundredths == 0, minutes != 0 { return small(minutes) }
        if fraction == 0 { return sign + whole }
        let digits = fraction % 10 == 0 ? String(fraction / 10) : (fraction < 10 ? "0" : "") + String(fraction)
        return sign + whole + "." + digits
    }

    /// 0 < |minutes| < 0.005, to five decimals (a millisecond is 0.0000167 min), trailing zeros dropped.
    private static func small(_ minutes: Double) -> String {
        let units = max(1, Int64((minutes.magnitude * 100_000).rounded()))
        var digits = String(units)
        digits = String(repeating: "0", count: 5 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return (minutes < 0 ? "-" : "") + "0." + digits
    }
}
