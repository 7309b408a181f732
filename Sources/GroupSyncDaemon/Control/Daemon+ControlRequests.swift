import GroupSyncCore
import GroupSyncStore

/// What the control socket asks of the daemon's store: writes (group-committed with every client's) and reads.
extension Daemon {
    /// `set` / `delete` requests from control-socket clients (`localWrite(from:)`), in order, group-committed
    /// with everyone else's. An invalid request gets its error and does not hold up the valid ones.
    func localWrites(_ requests: [Result<LocalWrite, TypedJSONError>]) -> [String] {
        var answers = [String?](repeating: nil, count: requests.count)
        var valid: [(index: Int, write: LocalWrite)] = []
        for (index, request) in requests.enumerated() {
            switch request {
            case .success(let write): valid.append((index, write))
            case .failure(let error): answers[index] = ControlResponse.error(error.description, badInput: true)
            }
        }
        let results = committer.commit(valid.map(\.write))
        for ((index, write), result) in zip(valid, results) {
            switch result {
            case .success(let change?): answers[index] = ControlResponse.written(change)
            case .success(nil): answers[index] = ControlResponse.error("no key '\(write.key)' in suite '\(write.suite)'", notFound: true)
            case .failure(let error): answers[index] = ControlResponse.error(error.description)
            }
        }
        return answers.map { $0! }
    }

    /// A `set` or `delete` request as the write it asks for, validated as `Store.write` will. `valueNumberText`:
    /// the text of `value` when it is a bare number (`JSONParser.parseRequest`), read as the type asks.
    static func localWrite(from request: [String: Value], valueNumberText: String? = nil) -> Result<LocalWrite, TypedJSONError> {
        guard case .string(let command)? = request["command"], case .string(let suite)? = request["suite"], case .string(let key)? = request["key"] else {
            return .failure(TypedJSONError("give suite and key as strings"))
        }
        let write: LocalWrite
        if command == "delete" {
            write = .delete(suite: suite, key: key)
        } else {
            guard case .string(let type)? = request["type"], let json = request["value"] else {
                return .failure(TypedJSONError("give type and value, as 'get --json' prints them"))
            }
            do { write = .set(suite: suite, key: key, value: try TypedJSON.value(type: type, json: json, numberText: valueNumberText)) } catch { return .failure(error) }
        }
        do { try Store.validate(write) } catch { return .failure(TypedJSONError(error.description)) }
        return .success(write)
    }

    /// `get` from a control-socket client: the entry as `get --json` prints it.
    func read(_ request: [String: Value]) -> String {
        guard case .string(let suite)? = request["suite"], case .string(let key)? = request["key"] else {
            return ControlResponse.error("give suite and key as strings", badInput: true)
        }
        do { try Store.validate(suite: suite, key: key) } catch { return ControlResponse.error(error.description, badInput: true) }
        let found = readLock.withLock { _ in Result { () throws(StoreError) in try reader.entry(suite: suite, key: key) } }
        switch found {
        case .success(let entry?) where !entry.isDeleted: return EntryFormatting.json(entry)
        case .success: return ControlResponse.error("no key '\(key)' in suite '\(suite)'", notFound: true)
        case .failure(let error): return ControlResponse.error(error.description)
        }
    }
}
