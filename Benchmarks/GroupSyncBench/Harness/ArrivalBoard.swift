import Foundation

/// Where reader threads post "key K arrived at time T" and the writer waits for its key: the same
/// mechanism for GroupSync's `watch` lines and Redis's keyspace notifications.
final class ArrivalBoard: @unchecked Sendable {
    private let condition = NSCondition()
    private var arrivals: [String: UInt64] = [:]

    func post(_ key: String, at time: UInt64) {
        condition.lock()
        if arrivals[key] == nil { arrivals[key] = time }
        condition.broadcast()
        condition.unlock()
    }

    /// The arrival time of `key`, waiting up to `seconds`; nil if it never came.
    func wait(for key: String, seconds: Double) -> UInt64? {
        let limit = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while arrivals[key] == nil {
            if !condition.wait(until: limit) { break }
        }
        return arrivals.removeValue(forKey: key)
    }
}
