import Testing
@testable import GroupSyncCore

@Suite struct DeviceNameTests {
    /// Names are bounded by what a hello carries: a longer one would have every session refused as malformed.
    @Test func aNameFitsInAHello() throws {
        #expect(DeviceName.isValid(String(repeating: "n", count: 255)))
        #expect(!DeviceName.isValid(String(repeating: "n", count: 256)) && !DeviceName.isValid("") && !DeviceName.isValid("a\nb"))
        let hello = Hello(versions: 1...2, deviceName: DeviceName.sendable(String(repeating: "n", count: 256)), storeID: "s", physicalMillis: 0, resume: nil)
        let decoded = try MessageCodec.decode(MessageCodec.frame(.hello(hello)))
        #expect(decoded == .hello(hello), "a name stored before the bound still makes a hello peers accept")
    }

    /// An over-long name is cut at a character boundary, never inside one.
    @Test func anOverlongNameIsCutBetweenCharacters() {
        let name = String(repeating: "a", count: 254) + "é🇫🇷"
        let sent = DeviceName.sendable(name)
        #expect(sent == String(repeating: "a", count: 254))
        #expect(DeviceName.sendable("Anna's laptop") == "Anna's laptop")
    }
}
