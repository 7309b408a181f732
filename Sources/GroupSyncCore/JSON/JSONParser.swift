/// Parses JSON text into a `Value`, keeping the integer/double distinction by how the number is written:
/// `7` is an int, `7.0` and `7e0` are doubles, so a double printed by `get` reads back as a double.
/// `null` has no App Group type and is refused rather than guessed at.
public struct JSONParser {
    private let bytes: [UInt8]
    private var index = 0
    /// Nesting bound, the same as the binary codec's, so every parsed value can be stored.
    private let maxDepth = ValueCodec.maxDepth

    /// The input is a Swift `String`, so it is valid UTF-8 already; only JSON's own grammar is checked here.
    public static func parse(_ text: String) throws(JSONError) -> Value {
        try parse(text, nullMembers: .refused)
    }

    /// What `parse` does with `null`, which no App Group value holds.
    public enum NullMembers: Sendable {
        /// Refused: a value to store has none.
        case refused
        /// Left out wherever it is (an object member or an array element), as if absent: for reading answers
        /// (the daemon's status), whose fields may be null.
        case omittedEverywhere
        /// Left out, except inside the outermost object's member of this name, where it is refused: a
        /// control-socket request, whose optional or unknown fields a client's encoder may write with nulls,
        /// while the `value` it carries keeps every member it was sent with or is refused (a dictionary
        /// member dropped silently would change the stored value).
        case omittedExceptIn(member: String)
    }

    public static func parse(_ text: String, nullMembers: NullMembers) throws(JSONError) -> Value {
        var parser = JSONParser(bytes: Array(text.utf8))
        parser.nullMembers = nullMembers
        parser.skipWhitespace()
        let omitting: Bool
        if case .refused = nullMembers { omitting = false } else { omitting = true }
        let value = try parser.parseValue(depth: 0, omittingNulls: omitting)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.error("unexpected text after the JSON value") }
        return value
    }

    /// A control-socket request: an object whose member `valueMember` carries a value to store, with nulls as
    /// `NullMembers.omittedExceptIn` says. Nesting is counted from that value, as for a value given alone
    /// (the object around it is not a level of the value: a 64-level value printed by `get --json` must be
    /// taken back). When the member is a bare number, its text is returned too, since only the request's
    /// `type` says whether it is meant as an int or a double: as a double, `-0` keeps its sign and an integer
    /// beyond 64 bits (how JavaScript and Go write 1e20) is a number; as an int, it is refused as too large.
    /// The member then holds the number as an int, or as a double when no int holds it.
    public static func parseRequest(_ text: String, valueMember member: String) throws(JSONError) -> (request: Value, valueNumberText: String?) {
        var parser = JSONParser(bytes: Array(text.utf8))
        parser.nullMembers = .omittedExceptIn(member: member)
        parser.outermostDepth = -1
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: -1, omittingNulls: true)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.error("unexpected text after the JSON value") }
        return (value, parser.valueNumberText)
    }

    private var nullMembers = NullMembers.refused
    /// The depth of the outermost value: -1 for a request, whose object is not a level of the value it carries.
    private var outermostDepth = 0
    /// The text of the request's value member when it is a bare number (`parseRequest`).
    private var valueNumberText: String?

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func error(_ message: String) -> JSONError { JSONError(message: message, offset: index) }
    private func unstorable(_ message: String, at offset: Int? = nil) -> JSONError {
        JSONError(message: message, offset: offset ?? index, kind: .unstorable)
    }
    /// A request's own object is not a stored value: what is wrong with it is said of the request.
    private func notARequest(_ message: String, at offset: Int? = nil) -> JSONError {
        JSONError(message: message, offset: offset ?? index, kind: .notARequest)
    }
    /// Whether a value at `depth` is the request itself (`parseRequest`), not a value inside one of its fields.
    private func isTheRequest(atDepth depth: Int) -> Bool { outermostDepth < 0 && depth == outermostDepth }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let c = current, c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { index += 1 }
    }

    private mutating func expect(_ literal: String) throws(JSONError) {
        for byte in literal.utf8 {
            guard current == byte else { throw error("expected '\(literal)'") }
            index += 1
        }
    }

    /// `omittingNulls`: null members and elements inside are left out (`NullMembers`).
    private mutating func parseValue(depth: Int, omittingNulls: Bool) throws(JSONError) -> Value {
        guard depth < maxDepth else { throw unstorable("nested deeper than \(maxDepth)") }
        guard let c = current else { throw error("unexpected end of JSON") }
        switch c {
        case UInt8(ascii: "{"): return try parseObject(depth: depth, omittingNulls: omittingNulls)
        case UInt8(ascii: "["): return try parseArray(depth: depth, omittingNulls: omittingNulls)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"):
            try expect("null")
            if isTheRequest(atDepth: depth) { throw notARequest("a request is a JSON object, not null", at: index - 4) }
            throw unstorable("null has no App Group type (to remove a key, delete it)", at: index - 4)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character '\(Character(Unicode.Scalar(c)))'")
        }
    }

    private mutating func parseObject(depth: Int, omittingNulls: Bool) throws(JSONError) -> Value {
        index += 1
        var dict: [String: Value] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") { index += 1; return .dictionary(dict) }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw error("expected a string key") }
            let key = try parseString()
            guard dict[key] == nil else {
                if isTheRequest(atDepth: depth) { throw notARequest("the member '\(key)' is given twice") }
                throw unstorable("duplicate key '\(key)'")
            }
            skipWhitespace()
            try expect(":")
            skipWhitespace()
            // The member itself may be null (absent); inside the excepted member, nothing may.
            var omitsInside = omittingNulls
            var isValueMember = false
            if depth == outermostDepth, case .omittedExceptIn(let member) = nullMembers, key == member {
                omitsInside = false
                isValueMember = true
            }
            if omittingNulls && current == UInt8(ascii: "n") {
                try expect("null")
            } else if isValueMember && outermostDepth < 0, let c = current, c == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) {
                let (number, text) = try parseNumber(beyondInt64: true)
                dict[key] = number
                valueNumberText = text
            } else {
                dict[key] = try parseValue(depth: depth + 1, omittingNulls: omitsInside)
            }
            skipWhitespace()
            if current == UInt8(ascii: ",") { index += 1; continue }
            try expect("}")
            return .dictionary(dict)
        }
    }

    private mutating func parseArray(depth: Int, omittingNulls: Bool) throws(JSONError) -> Value {
        index += 1
        var items: [Value] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") { index += 1; return .array(items) }
        while true {
            skipWhitespace()
            if omittingNulls && current == UInt8(ascii: "n") {
                try expect("null")
            } else {
                items.append(try parseValue(depth: depth + 1, omittingNulls: omittingNulls))
            }
            skipWhitespace()
            if current == UInt8(ascii: ",") { index += 1; continue }
            try expect("]")
            return .array(items)
        }
    }

    private mutating func parseNumber() throws(JSONError) -> Value {
        try parseNumber(beyondInt64: false).value
    }

    /// `beyondInt64`: an integer no Int64 holds is a double rather than an error (`parseRequest`).
    private mutating func parseNumber(beyondInt64: Bool) throws(JSONError) -> (value: Value, text: String) {
        let start = index
        var isInteger = true
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { throw error("expected a digit") }
        if first == UInt8(ascii: "0") { index += 1 } else { skipDigits() }
        if current == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard skipDigits() > 0 else { throw error("expected digits after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard skipDigits() > 0 else { throw error("expected digits in the exponent") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger {
            if let int = Int64(text) { return (.int(int), text) }
            guard beyondInt64, let double = Double(text), double.isFinite else { throw unstorable("integer \(text) does not fit in 64 bits", at: start) }
            return (.double(double), text)
        }
        guard let double = Double(text), double.isFinite, !DecimalUnderflow.roundedToZero(text, double) else {
            throw unstorable("number \(text) is out of range", at: start)
        }
        return (.double(double), text)
    }

    @discardableResult
    private mutating func skipDigits() -> Int {
        let start = index
        while let c = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) { index += 1 }
        return index - start
    }

    private mutating func parseString() throws(JSONError) -> String {
        index += 1
        // Most strings have no escapes: decode them in one piece (appending scalar by scalar was the cost
        // of parsing a control-socket request).
        let start = index
        while let c = current, c != UInt8(ascii: "\""), c != UInt8(ascii: "\\"), c >= 0x20 { index += 1 }
        if current == UInt8(ascii: "\"") {
            index += 1
            return String(decoding: bytes[start..<index - 1], as: UTF8.self)
        }
        var utf8 = Array(bytes[start..<index])
        while true {
            guard let c = current else { throw error("unterminated string") }
            switch c {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                guard let escape = current else { throw error("unterminated escape") }
                index += 1
                let scalar: Unicode.Scalar
                switch escape {
                case UInt8(ascii: "\""): scalar = "\""
                case UInt8(ascii: "\\"): scalar = "\\"
                case UInt8(ascii: "/"): scalar = "/"
                case UInt8(ascii: "b"): scalar = "\u{08}"
                case UInt8(ascii: "f"): scalar = "\u{0C}"
                case UInt8(ascii: "n"): scalar = "\n"
                case UInt8(ascii: "r"): scalar = "\r"
                case UInt8(ascii: "t"): scalar = "\t"
                case UInt8(ascii: "u"): scalar = try parseUnicodeEscape()
                default: throw error("unknown escape '\\\(Character(Unicode.Scalar(escape)))'")
                }
                UTF8.encode(scalar) { utf8.append($0) }
            case 0..<0x20:
                throw error("control character in string (escape it)")
            default:
                utf8.append(c)
                index += 1
            }
        }
    }

    private mutating func parseHex4() throws(JSONError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[index]
            let digit: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw error("bad hex digit in \\u escape")
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }

    private mutating func parseUnicodeEscape() throws(JSONError) -> Unicode.Scalar {
        let high = try parseHex4()
        if (0xD800..<0xDC00).contains(high) {
            guard current == UInt8(ascii: "\\") else { throw error("lone high surrogate") }
            index += 1
            try expect("u")
            let low = try parseHex4()
            guard (0xDC00..<0xE000).contains(low) else { throw error("bad low surrogate") }
            return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
        }
        guard let scalar = Unicode.Scalar(high) else { throw error("lone low surrogate") }
        return scalar
    }
}

public struct JSONError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public var offset: Int
    public var kind = Kind.syntax

    /// Told apart so that a client whose JSON is well-formed is not sent looking for a syntax error.
    public enum Kind: Sendable {
        /// Not JSON.
        case syntax
        /// JSON, but not a value an App Group holds: a null, a duplicate key, a number no int or double holds,
        /// nesting deeper than the store keeps.
        case unstorable
        /// JSON, but not a request (`parseRequest`): a bare null, a member of the request given twice. Said of
        /// the request, so that its client does not look for a value to change.
        case notARequest
    }

    public var description: String {
        switch kind {
        case .syntax: "invalid JSON at byte \(offset): \(message)"
        case .unstorable: "JSON that cannot be stored, at byte \(offset): \(message)"
        case .notARequest: "not a request, at byte \(offset): \(message)"
        }
    }
}
