import Glibc

/// Starts a detached OS thread running `body`. The daemon uses plain threads (one per connection, per
/// dialer, for the watcher, the control socket and signals): a user has a handful of peers, and blocking
/// code on threads is far easier to get right than callbacks on an event loop.
///
/// `name` (at most 15 bytes, the kernel's limit) becomes the thread's name in `/proc/<pid>/task/*/comm`, so
/// `top -H`, `strace -p` and the tests can tell that thread apart from the others.
///
/// Returns false, having run nothing, when the system will not start another thread (a process or cgroup
/// task limit): a connection from the network must cost that connection, never the daemon.
@discardableResult
func spawnThread(name: String? = nil, _ body: @escaping @Sendable () -> Void) -> Bool {
    final class Box: @unchecked Sendable { let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b } }
    let named: @Sendable () -> Void = {
        if let name { nameThisThread(name) }
        body()
    }
    let box = Unmanaged.passRetained(Box(named)).toOpaque()
    var thread = pthread_t()
    let rc = pthread_create(&thread, nil, { raw in
        let box = Unmanaged<AnyObject>.fromOpaque(raw!).takeRetainedValue() as! Box
        box.body()
        return nil
    }, box)
    guard rc == 0 else {
        Unmanaged<Box>.fromOpaque(box).release()
        return false
    }
    pthread_detach(thread)
    return true
}

/// Names the calling thread. Through `/proc/thread-self/comm`, because Swift's Glibc module does not show
/// `pthread_setname_np` (a GNU extension) and cannot call the variadic `prctl`. Best effort: a name is a
/// debugging aid, never worth failing over.
private func nameThisThread(_ name: String) {
    let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

/// A mutex with a condition variable: wait until something changes, with a timeout.
final class Condition: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private let clock: clockid_t

    /// Timeouts run on `clock`: the monotonic one by default, so a wall-clock jump neither hangs nor spins a
    /// waiter. `CLOCK_REALTIME` for a waiter whose deadline is a time of day (`wait(untilMillis:)`).
    init(clock: clockid_t = CLOCK_MONOTONIC) {
        self.clock = clock
        pthread_mutex_init(&mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, clock)
        pthread_cond_init(&condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    /// A condition whose timeouts run on the wall clock, for deadlines that are times of day.
    static func onWallClock() -> Condition { Condition(clock: CLOCK_REALTIME) }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    func locked<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body()
    }

    /// Runs `body` with the lock released; the caller holds the lock (inside `locked`) and holds it again after.
    func unlocked<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_unlock(&mutex)
        defer { pthread_mutex_lock(&mutex) }
        return try body()
    }

    /// Waits (the caller holds the lock, via `locked`) until signalled. Idle threads wait this way, with no
    /// timeout, so an idle daemon is not woken by timers it does not need.
    func wait() { pthread_cond_wait(&condition, &mutex) }

    /// Waits (the caller holds the lock, via `locked`) until signalled or `millis` pass.
    func wait(millis: Int64) {
        var now = timespec()
        clock_gettime(clock, &now)
        wait(untilMillis: Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000 + millis)
    }

    /// Waits (the caller holds the lock, via `locked`) until signalled or the condition's clock reads
    /// `deadline` (milliseconds since its epoch). On `CLOCK_REALTIME` the kernel ends the wait when the wall
    /// clock passes the deadline however it gets there: running, stepped forward, or across a suspend, which
    /// a wait of so many milliseconds on the monotonic clock sleeps through.
    func wait(untilMillis deadline: Int64) {
        var time = timespec(tv_sec: Int(deadline / 1000), tv_nsec: Int(deadline % 1000) * 1_000_000)
        pthread_cond_timedwait(&condition, &mutex, &time)
    }

    /// Wakes every waiter; the caller holds the lock (inside `locked`).
    func broadcastHoldingLock() { pthread_cond_broadcast(&condition) }

    /// Takes the lock and wakes every waiter.
    func broadcast() {
        pthread_mutex_lock(&mutex)
        pthread_cond_broadcast(&condition)
        pthread_mutex_unlock(&mutex)
    }
}

/// Milliseconds on the monotonic clock, for timeouts and backoff (never for versions).
func monotonicMillis() -> Int64 {
    monotonicMicros() / 1000
}

/// Microseconds on the monotonic clock, for waits shorter than a millisecond.
func monotonicMicros() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
}
