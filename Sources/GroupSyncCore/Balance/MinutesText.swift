/// Minutes as a person reads them: `5`, `12.5`, `0.25`, `8.92` — to the hundredth at most. Shares of a balance
/// split three ways are not round, and "8.916666666666666 min left" reads as a fault, not as precision.
public enum MinutesText {
    public static func format(_ minutes: Double) -> String {
        guard minutes.isFinite, minutes.magnitude < 1e15 else { return String(minutes) }
        let hundredths = Int64((minutes * 100).rounded())
        let whole = String(hundredths.magnitude / 100)
        let fraction = hundredths.magnitude % 100
        let sign = hundredths < 0 ? "-" : ""
        if fraction == 0 { return sign + whole }
        let digits = fraction % 10 == 0 ? String(fraction / 10) : (fraction < 10 ? "0" : "") + String(fraction)
        return sign + whole + "." + digits
    }
}
