import Testing
@testable import GroupSyncCore

/// A peer's text as this device shows it: cut to a bound, and safe on a terminal.
@Suite struct PeerTextTests {
    @Test func shortTextIsKeptWhole() {
        let text = String(repeating: "é", count: 256)  // 512 bytes: at the bound
        #expect(PeerText.shortened(text) == text)
    }

    @Test func longTextIsCutOnAScalarBoundaryAndSaysHowLongItWas() {
        let text = "a" + String(repeating: "é", count: 600)  // 1 + 1,200 bytes
        let cut = PeerText.shortened(text)
        #expect(cut == "a" + String(repeating: "é", count: 255) + "… (1201 bytes)")
        // One grapheme cluster of megabytes (a letter and its combining marks) is cut inside it.
        let cluster = "e" + String(repeating: "\u{301}", count: 100_000)
        #expect(PeerText.shortened(cluster, maxBytes: 5) == "e\u{301}\u{301}… (200001 bytes)")
    }

    @Test func controlCharactersAreWrittenOutAndTheRestIsKept() {
        #expect(PeerText.printable("plain, ümlaut ✓") == "plain, ümlaut ✓")
        #expect(PeerText.printable("\u{1B}[31mred\r\nfake\u{7F}\u{9B}") == "\\u{1B}[31mred\\u{D}\\u{A}fake\\u{7F}\\u{9B}")
    }
}
