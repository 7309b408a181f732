/// The `{name}` placeholders an App Group payload's title and body may hold, and their values for one posting.
public struct NotificationPlaceholders: Hashable, Sendable {
    /// The names the iOS side fills: the monitor's three and the shield's app or domain.
    public enum Name: String, CaseIterable, Hashable, Sendable {
        case activityName
        case callbackName
        case eventName
        case applicationOrDomainDisplayName
    }

    public var values: [Name: String]

    public init(_ values: [Name: String] = [:]) {
        self.values = values
    }

    /// The most UTF-8 bytes a filled title or body may have. A value is repeated once per placeholder, so short
    /// text and a long value could otherwise make gigabytes (found by review: 2,000 placeholders of a 20 KB
    /// value took the daemon 19 s of CPU and 110 MB). A notification shows a few lines, and a whole request
    /// must fit one stored value (1 MiB).
    public static let maxFilledBytes = 256 * 1024

    /// Replaces each `{name}` that has a value. Anything else — an unknown name, a known one without a value, a
    /// lone brace — is left exactly as written, so a typo shows up in the notification instead of vanishing.
    ///
    /// One pass, left to right: a value that itself contains `{eventName}` is not expanded again, so text
    /// coming from an app name cannot inject more substitutions.
    public func fill(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        scan(text, literal: { out.append(contentsOf: $0) }, value: { out.append(contentsOf: $0.unicodeScalars) })
        return String(out)
    }

    /// `fill(text)`, refused when it would be longer than `maxFilledBytes`: measured before it is built.
    public func fill(_ text: String, field: String) throws(NotificationError) -> String {
        var bytes = 0
        scan(text, literal: { bytes += String(String.UnicodeScalarView($0)).utf8.count }, value: { bytes += $0.utf8.count })
        guard bytes <= Self.maxFilledBytes else { throw .filledTooLong(field: field, bytes: bytes) }
        return fill(text)
    }

    /// Walks `text` once, handing each run of text kept as written to `literal` and each placeholder's value to
    /// `value`.
    private func scan(_ text: String, literal: (Substring.UnicodeScalarView) -> Void, value: (String) -> Void) {
        let scalars = Substring(text).unicodeScalars
        guard !values.isEmpty, scalars.contains("{") else { return literal(scalars) }
        var index = scalars.startIndex
        while index < scalars.endIndex {
            guard let brace = scalars[index...].firstIndex(of: "{") else { return literal(scalars[index...]) }
            literal(scalars[index..<brace])
            // The shortest `{…}` starting here; another `{` first means this brace is just text.
            let nameStart = scalars.index(after: brace)
            guard let close = scalars[nameStart...].firstIndex(where: { $0 == "}" || $0 == "{" }), scalars[close] == "}" else {
                literal(scalars[brace..<nameStart])
                index = nameStart
                continue
            }
            let after = scalars.index(after: close)
            if let known = Name(rawValue: String(String.UnicodeScalarView(scalars[nameStart..<close]))), let filled = values[known] {
                value(filled)
            } else {
                literal(scalars[brace..<after])
            }
            index = after
        }
    }
}
