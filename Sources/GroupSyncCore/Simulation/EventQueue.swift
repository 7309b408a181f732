/// A priority queue of timed events: earliest first, and among equal times the one scheduled first, so a
/// run never depends on anything but its seed.
struct EventQueue<Event> {
    private var heap: [(time: Int64, order: UInt64, event: Event)] = []
    private var scheduled: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }

    mutating func push(_ event: Event, at time: Int64) {
        scheduled += 1
        heap.append((time, scheduled, event))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(child, parent) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> (time: Int64, event: Event)? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var first = parent
            if left < heap.count && precedes(left, first) { first = left }
            if right < heap.count && precedes(right, first) { first = right }
            guard first != parent else { break }
            heap.swapAt(parent, first)
            parent = first
        }
        return (top.time, top.event)
    }

    private func precedes(_ a: Int, _ b: Int) -> Bool {
        heap[a].time != heap[b].time ? heap[a].time < heap[b].time : heap[a].order < heap[b].order
    }
}
