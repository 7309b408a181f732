/// Text a peer chose — the reason it gave for ending a session, a suite or key it sent — as this device shows
/// it in its log and in `status`. A frame may carry 4 MiB of it: shown whole, a peer that reconnected in a
/// loop grew the log by megabytes a second and made `status` print megabytes (found by review).
public enum PeerText {
    /// How much of a peer's text is kept, in UTF-8 bytes: enough for any explanation a device sends.
    public static let maxShownBytes = 512

    /// `text` cut to at most `maxBytes` UTF-8 bytes, on a scalar boundary, and marked as cut with its length.
    public static func shortened(_ text: String, maxBytes: Int = maxShownBytes) -> String {
        let length = text.utf8.count
        guard length > maxBytes else { return text }
        var kept = String.UnicodeScalarView(), bytes = 0
        for scalar in text.unicodeScalars {
            let size = UTF8.width(scalar)
            guard bytes + size <= maxBytes else { break }
            kept.append(scalar)
            bytes += size
        }
        return String(kept) + "… (\(length) bytes)"
    }

    /// `text` safe to print on a terminal: control characters (C0, DEL, C1), which could move the cursor,
    /// retitle the window or start a new line that looks like output of ours, are written as `\u{…}`.
    public static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
