import Testing
@testable import GroupSyncCore

@Suite struct JSONTests {
    @Test func numbersKeepTheirKind() throws {
        #expect(try JSONParser.parse("7") == .int(7))
        #expect(try JSONParser.parse("-7") == .int(-7))
        #expect(try JSONParser.parse("7.0") == .double(7.0))
        #expect(try JSONParser.parse("0.25") == .double(0.25))
        #expect(try JSONParser.parse("1e3") == .double(1000))
        // Zero written as zero stays zero; a tiny number stays tiny (a subnormal), and only one that would become 0 is refused.
        #expect(try JSONParser.parse("0.0e-400") == .double(0))
        #expect(try JSONParser.parse("-0.0") == .double(-0.0))
        #expect(try JSONParser.parse("5e-324") == .double(Double.leastNonzeroMagnitude))
        #expect(JSONWriter.string(for: .double(7.0)) == "7.0")
        #expect(JSONWriter.string(for: .double(0.25)) == "0.25")
        #expect(JSONWriter.string(for: .int(7)) == "7")
    }

    @Test func nestedStructuresRoundTrip() throws {
        let text = #"[{"type":"blockSelection","payload":{"title":"Time's up","n":[1,2.5,true,false,"x"]}}]"#
        let value = try JSONParser.parse(text)
        #expect(try JSONParser.parse(JSONWriter.string(for: value)) == value)
        guard case .array(let items) = value, case .dictionary(let action) = items.first else { Issue.record("not an array of dicts"); return }
        #expect(action["type"] == .string("blockSelection"))
    }

    @Test func stringsEscapeAndUnescape() throws {
        let tricky = "quote \" backslash \\ newline \n tab \t nul \u{0} emoji 😀 é"
        let json = JSONWriter.string(for: .string(tricky))
        #expect(try JSONParser.parse(json) == .string(tricky))
        #expect(try JSONParser.parse(#""\ud83d\ude00""#) == .string("😀"))
    }

    @Test(arguments: ["", "[1,]", "01", "1.", "-", "[1 2]", "{\"a\"}", "\"\\x\"", "\"\\ud800\"",
                      "tru", "[", "\"unterminated", "\"a\u{1}\"", "{} {}"])
    func malformedJSONIsRefused(text: String) {
        #expect(throws: JSONError.self) { try JSONParser.parse(text) }
        do { _ = try JSONParser.parse(text) } catch { #expect(error.kind == .syntax && "\(error)".hasPrefix("invalid JSON at byte")) }
    }

    /// Well-formed JSON that no App Group value holds is refused as such, not called invalid: a client
    /// told "invalid JSON" looks for a syntax error that is not there (found by review).
    @Test(arguments: ["null", "[1,null]", "{\"a\":1,\"a\":2}", "99999999999999999999", "1e999", "1e-400", "-2.5e-999",
                      String(repeating: "[", count: 65) + String(repeating: "]", count: 65)])
    func wellFormedJSONNoValueHoldsIsRefusedAsUnstorable(text: String) {
        #expect(throws: JSONError.self) { try JSONParser.parse(text) }
        do { _ = try JSONParser.parse(text) } catch {
            #expect(error.kind == .unstorable)
            #expect("\(error)".hasPrefix("JSON that cannot be stored, at byte"), "\(error)")
        }
    }

    @Test func answersMayCarryNullMembers() throws {
        let parsed = try JSONParser.parse(#"{"a":null,"b":{"c":null,"d":1}}"#, nullMembers: .omittedEverywhere)
        #expect(parsed == .dictionary(["b": .dictionary(["d": .int(1)])]))
        #expect(try JSONParser.parse(#"{"a":[null,1,null]}"#, nullMembers: .omittedEverywhere) == .dictionary(["a": .array([.int(1)])]))
        #expect(throws: JSONError.self) { try JSONParser.parse(#"{"a":null}"#) }
    }

    /// A request's own fields may be null (absent), but a null inside the value it carries is refused: left
    /// out, it would store a dictionary without the members the client sent.
    @Test func requestsOmitNullsOutsideTheirValue() throws {
        let request = JSONParser.NullMembers.omittedExceptIn(member: "value")
        let parsed = try JSONParser.parse(#"{"a":null,"b":1,"extra":[null,{"c":null}],"value":null}"#, nullMembers: request)
        #expect(parsed == .dictionary(["b": .int(1), "extra": .array([.dictionary([:])])]))
        #expect(throws: JSONError.self) { try JSONParser.parse(#"{"value":{"title":"x","subtitle":null}}"#, nullMembers: request) }
        #expect(throws: JSONError.self) { try JSONParser.parse(#"{"value":[{"label":null}]}"#, nullMembers: request) }
        #expect(throws: JSONError.self) { try JSONParser.parse(#"{"value":[1,null]}"#, nullMembers: request) }
        // Only the outermost object's member is the value: a nested "value" is not.
        #expect(try JSONParser.parse(#"{"extra":{"value":null}}"#, nullMembers: request) == .dictionary(["extra": .dictionary([:])]))
    }

    /// A request's value is nested as deep as a value given alone may be, and a bare number keeps its text
    /// for the request's type to read.
    @Test func aRequestCountsNestingFromItsValueAndKeepsANumbersText() throws {
        let deepest = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try JSONParser.parse(deepest) }
        #expect(throws: Never.self) { try JSONParser.parseRequest(#"{"value":"# + deepest + "}", valueMember: "value") }
        #expect(throws: JSONError.self) { try JSONParser.parseRequest(#"{"value":["# + deepest + "]}", valueMember: "value") }
        #expect(throws: JSONError.self) { try JSONParser.parseRequest(#"{"extra":["# + deepest + "]}", valueMember: "value") }
        let negativeZero = try JSONParser.parseRequest(#"{"value":-0,"type":"double"}"#, valueMember: "value")
        #expect(negativeZero.request == .dictionary(["value": .int(0), "type": .string("double")]) && negativeZero.valueNumberText == "-0")
        let large = try JSONParser.parseRequest(#"{"value":100000000000000000000}"#, valueMember: "value")
        #expect(large.request == .dictionary(["value": .double(1e20)]) && large.valueNumberText == "100000000000000000000")
        #expect(try JSONParser.parseRequest(#"{"value":"7"}"#, valueMember: "value").valueNumberText == nil)
        // Only the value member itself: inside it, and elsewhere, an integer beyond 64 bits is still refused.
        #expect(throws: JSONError.self) { try JSONParser.parseRequest(#"{"value":[100000000000000000000]}"#, valueMember: "value") }
        #expect(throws: JSONError.self) { try JSONParser.parseRequest(#"{"other":100000000000000000000}"#, valueMember: "value") }
        guard case .double(let zero) = try TypedJSON.value(type: "double", json: .int(0), numberText: "-0") else { Issue.record("not a double"); return }
        #expect(zero == 0 && zero.sign == .minus)
        #expect(throws: TypedJSONError.self) { try TypedJSON.value(type: "int", json: .double(1e20), numberText: "100000000000000000000") }
        #expect(try TypedJSON.value(type: "int", json: .int(-0), numberText: "-0") == .int(0))
    }

    /// What is wrong with a request's own object is said of the request: a client sending a bare null, or a
    /// field twice, has no value to look at. Inside a field, the same JSON is still a value that cannot be
    /// stored.
    @Test func aRequestsOwnFaultsAreSaidOfTheRequest() {
        func kind(_ line: String) -> JSONError.Kind? {
            do throws(JSONError) { _ = try JSONParser.parseRequest(line, valueMember: "value"); return nil } catch { return error.kind }
        }
        #expect(kind("null") == .notARequest)
        #expect(kind(" null ") == .notARequest)
        #expect(kind(#"{"command":"get","command":"set"}"#) == .notARequest)
        #expect(kind(#"{"value":{"a":1,"a":2}}"#) == .unstorable)
        #expect(kind(#"{"extra":{"a":1,"a":2}}"#) == .unstorable)
        #expect(kind(#"{"value":[null]}"#) == .unstorable)
        #expect(kind("nul") == .syntax)
        // Outside a request, a bare null and a duplicate key are values that cannot be stored, as before.
        #expect(throws: JSONError(message: "null has no App Group type (to remove a key, delete it)", offset: 0, kind: .unstorable)) { try JSONParser.parse("null") }
        #expect(throws: JSONError(message: "duplicate key 'a'", offset: 10, kind: .unstorable)) { try JSONParser.parse(#"{"a":1,"a":2}"#) }
    }

    @Test func deepNestingIsBounded() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONError.self) { try JSONParser.parse(deep) }
    }
}
