import GroupSyncCore
import GroupSyncStore

/// One request line, parsed (and a write validated) as soon as it arrived: while the loop still waits for
/// other clients' writes, so that this work overlaps the wait instead of lengthening the turn. Measured with
/// 8 clients writing one at a time: a turn's work after the wait went from ≈370 to ≈345 µs.
struct ReceivedRequest {
    /// The JSON object and its command, when the line is an object with a string `command`; nil for anything else.
    let request: (object: [String: Value], command: String)?
    /// For `set` and `delete`, which the loop commits together with every other client's: the write, or why
    /// the request cannot be one.
    let write: Result<LocalWrite, TypedJSONError>?
    /// Why the line is not a request, when it is not: the parser's own words, or what the object lacks.
    let problem: String?

    init(_ line: String) {
        // A member set to null counts as absent: CONTROL.md lets clients send fields the daemon does not know,
        // and a JSON encoder may write an unset optional as null. A null `value` is then a missing value; a null
        // inside it is refused, as `set --json` refuses it.
        let parsed: Value, valueNumberText: String?
        do throws(JSONError) {
            (parsed, valueNumberText) = try JSONParser.parseRequest(line, valueMember: "value")
        } catch {
            let reason = error.kind == .notARequest ? "\(error.message), at byte \(error.offset)" : "the request is \(error)"
            (request, write, problem) = (nil, nil, reason)
            return
        }
        guard case .dictionary(let object) = parsed, case .string(let command)? = object["command"] else {
            (request, write, problem) = (nil, nil, "the request is not a JSON object with a command")
            return
        }
        request = (object, command)
        write = command == "set" || command == "delete" ? Daemon.localWrite(from: object, valueNumberText: valueNumberText) : nil
        problem = nil
    }

    /// A line refused before it was parsed.
    init(refusing problem: String) {
        (request, write, self.problem) = (nil, nil, problem)
    }
}
