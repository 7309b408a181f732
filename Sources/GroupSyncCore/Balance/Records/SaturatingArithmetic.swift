/// Arithmetic on amounts derived from balance records.
///
/// A paired peer's records are network input and replicate to every device: a sum that trapped on them
/// would take down the daemon (and every balance command) on all of the user's machines, again after each
/// restart. Each record's numbers are bounded where they are read (`ValueFields.swift`), but sums run
/// over every account and day, whose number the peer also chooses; so they stick at the ends of `Int64`
/// instead of trapping. Amounts so large are meaningless anyway, and no reader acts on them but to show them.
extension Int64 {
    func saturatingAdding(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    func saturatingSubtracting(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : difference
    }

    /// `self × factor ÷ divisor` with the product kept at full width, so only the quotient must fit; one
    /// that does not (or a zero divisor) sticks at the end of `Int64` its sign points to.
    func scaled(by factor: Int64, dividedBy divisor: Int64) -> Int64 {
        let negative = (self < 0) != (factor < 0)
        guard divisor != 0 else { return self == 0 || factor == 0 ? 0 : (negative ? .min : .max) }
        let product = self.magnitude.multipliedFullWidth(by: factor.magnitude)
        let d = divisor.magnitude
        let resultNegative = negative != (divisor < 0)
        // The quotient fits in 64 bits exactly when the product's high half is below the divisor.
        guard product.high < d else { return resultNegative ? .min : .max }
        let quotient = d.dividingFullWidth(product).quotient
        if resultNegative { return quotient > Int64.min.magnitude ? .min : Int64(truncatingIfNeeded: 0 &- quotient) }
        return quotient > UInt64(Int64.max) ? .max : Int64(quotient)
    }
}

extension Sequence {
    /// The sum of `amount` over the elements, saturating.
    func saturatingSum(_ amount: (Element) throws -> Int64) rethrows -> Int64 {
        try reduce(0) { $0.saturatingAdding(try amount($1)) }
    }
}
