import GroupSyncCore

/// Turns `set`'s value argument and type flag into a typed `Value`, refusing anything that does not
/// parse exactly (bad input writes nothing).
enum ValueArgument {
    static let typeFlags = ["--int", "--double", "--bool", "--date", "--data", "--json"]

    static func parse(_ arguments: ParsedArguments, positionalValue: String?) throws(CLIError) -> Value {
        let given = typeFlags.filter { arguments.value($0) != nil }
        guard given.count <= 1 else { throw .usage("choose one type, not \(given.joined(separator: " and "))") }
        guard let flag = given.first else {
            guard let text = positionalValue else { throw .usage("missing VALUE") }
            return .string(text)
        }
        guard positionalValue == nil else { throw .usage("give the value either after \(flag) or as VALUE, not both") }
        let text = arguments.value(flag)!
        switch flag {
        case "--int":
            guard let int = Int64(text) else { throw .badInput("--int expects a whole number from \(Int64.min) to \(Int64.max), got '\(text)'") }
            return .int(int)
        case "--double":
            guard let double = DecimalNumber.parse(text) else {
                throw .badInput("--double expects a number a double can hold, such as 0.25 (finite, and not so near 0 that it becomes 0), got '\(text)'")
            }
            return .double(double)
        case "--bool":
            switch text.lowercased() {
            case "true", "yes", "1": return .bool(true)
            case "false", "no", "0": return .bool(false)
            default: throw .badInput("--bool expects true or false, got '\(text)'")
            }
        case "--date":
            guard let seconds = ISO8601.parse(text) else {
                // A local time is valid ISO 8601 but names no instant: said so, not "expects ISO 8601" (found by review).
                if ISO8601.parse(text + "Z") != nil {
                    throw .badInput("--date needs a time zone: end it with Z (UTC) or an offset such as +01:00, got '\(text)'")
                }
                throw .badInput("--date expects an ISO 8601 date-time with Z or an offset (2026-11-29T13:15:00Z, 2026-11-29T14:15+01:00) or a date (2026-11-29, midnight UTC), got '\(text)'")
            }
            return .date(seconds)
        case "--data":
            guard let bytes = Base64.decode(text) else { throw .badInput("--data expects base64, got '\(text)'") }
            return .data(bytes)
        default:
            do { return try JSONParser.parse(text) } catch { throw .badInput("--json: \(error)") }
        }
    }
}
