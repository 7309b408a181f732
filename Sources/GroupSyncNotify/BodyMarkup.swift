/// A notification's body as text for a server that reads markup in it. The freedesktop spec lets a server
/// that advertises "body-markup" parse `<b>`, `<i>`, `<a href>`… and entities in the body; GroupSync's bodies
/// are plain text (an app's words, as on iOS), so there "Tom & Jerry <3" must be sent escaped or it shows
/// mangled or not at all. A server without that capability shows the body as it is sent. The title is
/// plain text for every server.
enum BodyMarkup {
    static let capability = "body-markup"

    /// Whether `text` holds a character markup reads: otherwise it is the same escaped or not.
    static func wouldChange(_ text: String) -> Bool {
        text.utf8.contains { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") }
    }

    static func escaped(_ text: String) -> String {
        guard wouldChange(text) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            default: result.append(character)
            }
        }
        return result
    }
}
