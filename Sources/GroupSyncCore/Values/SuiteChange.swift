/// One change a pure planner asks the store to make to a key: store a value, or delete it.
public enum SuiteChange: Equatable, Sendable {
    case set(Value)
    case delete
}
