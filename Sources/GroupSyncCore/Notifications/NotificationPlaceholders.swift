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

    /// Replaces each `{name}` that has a value. Anything else — an unknown name, a known one without a value, a
    /// lone brace — is left exactly as written, so a typo shows up in the notification instead of vanishing.
    ///
    /// One pass, left to right: a value that itself contains `{eventName}` is not expanded again, so text
    /// coming from an app name cannot inject more substitutions.
    public func fill(_ text: String) -> String {
        guard !values.isEmpty, text.unicodeScalars.contains("{") else { return text }
        let scalars = text.unicodeScalars
        var out = String.UnicodeScalarView()
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let scalar = scalars[index]
            guard scalar == "{" else {
                out.append(scalar)
                index = scalars.index(after: index)
                continue
            }
            // The shortest `{…}` starting here; another `{` first means this brace is just text.
            let nameStart = scalars.index(after: index)
            guard let close = scalars[nameStart...].firstIndex(where: { $0 == "}" || $0 == "{" }), scalars[close] == "}" else {
                out.append(scalar)
                index = nameStart
                continue
            }
            let name = String(String.UnicodeScalarView(scalars[nameStart..<close]))
            let after = scalars.index(after: close)
            if let known = Name(rawValue: name), let value = values[known] {
                out.append(contentsOf: value.unicodeScalars)
            } else {
                out.append(contentsOf: scalars[index..<after])
            }
            index = after
        }
        return String(out)
    }
}
