import Foundation
import GroupSyncCore
import GroupSyncTransport
import Synchronization
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// A shareable lock-protected value (`Mutex` itself cannot be copied into closures).
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}

/// A device for tests: its identity, a changeable allow-list and a TLS context that consults it.
final class TestDevice: Sendable {
    let identity: DeviceCertificate
    let context: TLSContext
    private let allowed: Locked<Set<DeviceID>>

    var id: DeviceID { identity.deviceID }

    init(allowing peers: [DeviceID] = []) throws {
        identity = try DeviceCertificate.generate(commonName: "test")
        let allowed = Locked(Set(peers))
        self.allowed = allowed
        // The closure reads the same Mutex the test changes, so changes apply to the next handshake.
        context = try TLSContext(certificate: identity, isAllowed: { [allowed] id in
            allowed.withLock { $0.contains(id) }
        })
    }

    func allow(_ peer: DeviceID) { allowed.withLock { _ = $0.insert(peer) } }
    func disallow(_ peer: DeviceID) { allowed.withLock { _ = $0.remove(peer) } }
}

/// A listener with an accept thread that handshakes every connection on its own thread (as a real server should),
/// records each outcome, and hands successful connections to `serve`.
final class TestServer: Sendable {
    let listener: TLSListener
    private let outcomes = Locked<[Result<TLSConnection, TransportError>]>([])
    private let arrived = DispatchSemaphore(value: 0)

    var port: UInt16 { listener.port }

    init(device: TestDevice, host: String = "127.0.0.1", handshakeTimeout: Duration = .seconds(3),
         serve: @escaping @Sendable (TLSConnection) -> Void = { _ in }) throws {
        listener = try TLSListener.bind(host: host, port: 0, context: device.context)
        let listener = self.listener, outcomes = self.outcomes, arrived = self.arrived
        Thread.detachNewThread {
            while true {
                let pending: PendingConnection
                do {
                    pending = try listener.accept()
                } catch {
                    return  // listener closed
                }
                Thread.detachNewThread {
                    do throws(TransportError) {
                        let connection = try pending.handshake(timeout: handshakeTimeout)
                        outcomes.withLock { $0.append(.success(connection)) }
                        arrived.signal()
                        serve(connection)
                    } catch {
                        outcomes.withLock { $0.append(.failure(error)) }
                        arrived.signal()
                    }
                }
            }
        }
    }

    /// The next handshake outcome, or nil if none arrives in time.
    func nextOutcome(within seconds: Double = 5) -> Result<TLSConnection, TransportError>? {
        guard arrived.wait(timeout: .now() + seconds) == .success else { return nil }
        return outcomes.withLock { $0.removeFirst() }
    }

    func stop() {
        listener.close()
    }

    deinit {
        listener.close()
    }
}

/// Echoes everything back until the peer closes.
let echo: @Sendable (TLSConnection) -> Void = { connection in
    while let bytes = try? connection.read(timeout: .seconds(10)), !bytes.isEmpty {
        guard (try? connection.writeAll(bytes)) != nil else { break }
    }
    connection.close()
}

/// A plain TCP client, for peers that do not speak TLS.
final class RawTCPClient: Sendable {
    let fd: Int32

    init(port: UInt16) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else { throw POSIXError(.ECONNREFUSED) }
    }

    func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    deinit {
        Glibc.close(fd)
    }
}

/// Runs `body` on another thread and fails the test (instead of hanging) if it does not finish in time.
func withinDeadline<T: Sendable>(_ seconds: Double, file: StaticString = #filePath, line: UInt = #line,
                                 _ body: @escaping @Sendable () throws -> T) throws -> T {
    let result = Locked<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        let outcome = Result { try body() }
        result.withLock { $0 = outcome }
        done.signal()
    }
    guard done.wait(timeout: .now() + seconds) == .success else {
        XCTFail("did not finish within \(seconds) s", file: file, line: line)
        throw POSIXError(.ETIMEDOUT)
    }
    return try result.withLock { $0! }.get()
}

extension XCTestCase {
    /// Asserts `body` throws a `TransportError` and returns it.
    func transportError<T>(_ body: @autoclosure () throws -> T, file: StaticString = #filePath,
                           line: UInt = #line) -> TransportError? {
        do {
            _ = try body()
            XCTFail("expected a TransportError, got success", file: file, line: line)
            return nil
        } catch let error as TransportError {
            return error
        } catch {
            XCTFail("expected a TransportError, got \(error)", file: file, line: line)
            return nil
        }
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
