import Testing
@testable import GroupSyncCore

@Suite struct DeviceIDTests {
    @Test func textFormRoundTrips() throws {
        let id = try DeviceID(bytes: (0..<32).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) })
        let text = id.description
        #expect(text.count == 63)
        #expect(text.split(separator: "-").count == 8)
        #expect(try DeviceID(parsing: text) == id)
        #expect(try DeviceID(parsing: text.lowercased().split(separator: "-").joined(separator: " ")) == id)
    }

    @Test func mistypedCharacterIsCaught() throws {
        let id = try DeviceID(bytes: Array(repeating: 0xAB, count: 32))
        var chars = Array(id.description)
        chars[3] = chars[3] == "A" ? "B" : "A"
        #expect(throws: DeviceIDError.self) { try DeviceID(parsing: String(chars)) }
    }

    @Test func garbageIsRefused() {
        #expect(throws: DeviceIDError.self) { try DeviceID(parsing: "hello") }
        #expect(throws: DeviceIDError.self) { try DeviceID(bytes: [1, 2, 3]) }
    }
}
