/// A value in JSON together with its type name, as `get --json` prints it and the control socket takes it:
/// `{"type":"double","value":7.0}`. The type name restores what plain JSON cannot say (a date is an ISO 8601
/// string, data is base64, and `7` may be meant as a double).
public enum TypedJSON {
    /// `numberText`: how `json` was written when it is a bare number (`JSONParser.parseRequest`). A double is
    /// read from it, so that `-0` keeps its sign and an integer beyond 64 bits is a double like any other.
    public static func value(type: String, json: Value, numberText: String? = nil) throws(TypedJSONError) -> Value {
        if let numberText {
            if type == "double", let double = Double(numberText) { return .double(double) }
            if type == "int", case .double = json, !numberText.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
                throw TypedJSONError("integer \(numberText) does not fit in 64 bits")
            }
        }
        switch (type, json) {
        case ("string", .string), ("int", .int), ("double", .double), ("bool", .bool), ("array", .array), ("dictionary", .dictionary):
            return json
        case ("double", .int(let int)):
            return .double(Double(int))
        case ("date", .string(let text)):
            guard let seconds = ISO8601.parse(text) else { throw TypedJSONError("'\(text)' is not an ISO 8601 date") }
            return .date(seconds)
        case ("data", .string(let text)):
            guard let bytes = Base64.decode(text) else { throw TypedJSONError("the data value is not base64") }
            return .data(bytes)
        case ("string", _), ("int", _), ("double", _), ("bool", _), ("date", _), ("data", _), ("array", _), ("dictionary", _):
            // A bare number is named as JSON has it: which Swift type the parser chose for it is not the client's.
            let written = numberText == nil ? json.typeName : "number"
            throw TypedJSONError("a \(written) JSON value cannot be stored as type '\(type)'")
        default:
            throw TypedJSONError("unknown type '\(type)' (string, int, double, bool, date, data, array, dictionary)")
        }
    }
}

public struct TypedJSONError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
