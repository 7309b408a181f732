import Foundation
import GroupSyncCore
@testable import GroupSyncTransport
import Synchronization
import XCTest

/// Real sockets on loopback with ephemeral ports and real certificates. Every wait is bounded.
final class TLSConnectionTests: XCTestCase {
    // MARK: Paired devices

    func testPairedDevicesExchangeBytesBothWays() throws {
        let server = try TestDevice(), client = try TestDevice()
        server.allow(client.id)
        client.allow(server.id)
        let listener = try TestServer(device: server) { connection in
            let request = try? connection.read(timeout: .seconds(5))
            try? connection.writeAll(Array("pong:".utf8) + (request ?? []))
            connection.close()
        }

        let connection = try TLSConnection.connect(host: "127.0.0.1", port: listener.port, context: client.context,
                                                   expectedPeer: server.id, timeout: .seconds(5))
        XCTAssertEqual(connection.peerID, server.id)
        XCTAssertEqual(connection.localDeviceID, client.id)
        XCTAssertTrue(connection.remoteAddress.hasPrefix("127.0.0.1:"), connection.remoteAddress)
        try connection.writeAll(Array("ping".utf8))
        XCTAssertEqual(try connection.readExactly(9, timeout: .seconds(5)), Array("pong:ping".utf8))
        // The server said goodbye properly, so the stream ends cleanly.
        XCTAssertEqual(try connection.read(timeout: .seconds(5)), [])

        let accepted = try XCTUnwrap(listener.nextOutcome()).get()
        XCTAssertEqual(accepted.peerID, client.id)
        XCTAssertEqual(accepted.localDeviceID, server.id)
        connection.close()
    }

    func testFullDuplexLargeTransfer() throws {
        let server = try TestDevice(), client = try TestDevice()
        server.allow(client.id)
        client.allow(server.id)
        let listener = try TestServer(device: server, serve: echo)
        let connection = try TLSConnection.connect(host: "127.0.0.1", port: listener.port, context: client.context,
                                                   timeout: .seconds(5))
        // Write 4 MiB on one thread while reading the echo on another: more than the socket buffers hold,
        // so it only finishes if reading and writing really run at the same time.
        let payload = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        let writer = Thread { try? connection.writeAll(payload, timeout: .seconds(20)) }
        writer.start()
        let received = try withinDeadline(20) { try connection.readExactly(payload.count, timeout: .seconds(20)) }
        XCTAssertTrue(received == payload)
        connection.close()
    }

    func testIPv6LoopbackAndHostNames() throws {
        let server = try TestDevice(), client = try TestDevice()
        server.allow(client.id)
        client.allow(server.id)
        let listener: TestServer
        do {
            listener = try TestServer(device: server, host: "::1", serve: echo)
        } catch {
            throw XCTSkip("no IPv6 loopback here: \(error)")
        }
        let connection = try TLSConnection.connect(host: "::1", port: listener.port, context: client.context,
                                                   expectedPeer: server.id, timeout: .seconds(5))
        XCTAssertTrue(connection.remoteAddress.hasPrefix("[::1]:"), connection.remoteAddress)
        try connection.writeAll([1, 2, 3])
        XCTAssertEqual(try connection.readExactly(3, timeout: .seconds(5)), [1, 2, 3])
        connection.close()

        // "localhost" resolves through getaddrinfo; whichever family comes first, some address reaches a listener.
        let v4 = try TestServer(device: server, host: "localhost", serve: echo)
        let named = try TLSConnection.connect(host: "localhost", port: v4.port, context: client.context,
                                              timeout: .seconds(5))
        XCTAssertEqual(named.peerID, server.id)
        named.close()
    }

    // MARK: Refusals

    func testUnknownClientIsRefused() throws {
        let server = try TestDevice(), stranger = try TestDevice()
        stranger.allow(server.id)  // the stranger trusts the server, but the server has not paired it
        let listener = try TestServer(device: server)

        // TLS 1.3: the client's side of the handshake may complete; the refusal arrives at its first read.
        let error = try withinDeadline(5) { () -> TransportError? in
            let connection = try TLSConnection.connect(host: "127.0.0.1", port: listener.port,
                                                       context: stranger.context, timeout: .seconds(5))
            do throws(TransportError) {
                _ = try connection.read(timeout: .seconds(5))
                return nil
            } catch {
                return error
            }
        }
        guard case .refusedByPeer(_, let ours) = error else { return XCTFail("client saw \(String(describing: error))") }
        XCTAssertEqual(ours, stranger.id)
        XCTAssertTrue("\(error!)".contains(stranger.id.description), "\(error!)")

        let refusal = try XCTUnwrap(listener.nextOutcome()?.failure)
        XCTAssertEqual(refusal, .peerNotAllowed(stranger.id))
        // The log line names the device so the user knows what to pair.
        XCTAssertTrue(refusal.description.contains(stranger.id.description), refusal.description)
    }

    func testUnknownServerIsRefusedByClient() throws {
        let server = try TestDevice(), client = try TestDevice()
        server.allow(client.id)  // the client has not paired the server
        let listener = try TestServer(device: server)

        let error = transportError(try TLSConnection.connect(host: "127.0.0.1", port: listener.port,
                                                              context: client.context, timeout: .seconds(5)))
        XCTAssertEqual(error, .peerNotAllowed(server.id))
        // The server sees the client's alert.
        let serverSide = try XCTUnwrap(listener.nextOutcome()?.failure)
        guard case .refusedByPeer(_, let ours) = serverSide else { return XCTFail("server saw \(serverSide)") }
        XCTAssertEqual(ours, server.id)
    }

    func testClientRefusesAPairedServerThatIsNotTheExpectedOne() throws {
        let server = try TestDevice(), client = try TestDevice(), other = try TestDevice()
        server.allow(client.id)
        client.allow(server.id)
        let listener = try TestServer(device: server)
        let error = transportError(try TLSConnection.connect(host: "127.0.0.1", port: listener.port,
                                                              context: client.context, expectedPeer: other.id,
                                                              timeout: .seconds(5)))
        XCTAssertEqual(error, .unexpectedPeer(expected: other.id, presented: server.id))
        // A reinstalled device answers so too: the client's message says how to pair it again.
        XCTAssertTrue(error?.description.contains("'groupsync peer remove \(other.id.short)', then 'groupsync peer add \(server.id)'") == true,
                      error?.description ?? "")
        // The server is told it was dialed for another device, not advised to pair one it has paired.
        let serverSide = try XCTUnwrap(listener.nextOutcome()?.failure)
        guard case .dialedForAnotherDevice(_, let ours) = serverSide else { return XCTFail("server saw \(serverSide)") }
        XCTAssertEqual(ours, server.id)
        XCTAssertFalse(serverSide.description.contains("not paired"), serverSide.description)
    }

    func testAllowListChangesApplyToTheNextHandshake() throws {
        let server = try TestDevice(), client = try TestDevice()
        client.allow(server.id)
        server.allow(client.id)
        let listener = try TestServer(device: server, serve: echo)

        func roundTrip() throws -> [UInt8] {
            let connection = try TLSConnection.connect(host: "127.0.0.1", port: listener.port, context: client.context,
                                                       timeout: .seconds(5))
            defer { connection.close() }
            try connection.writeAll([42])
            return try connection.read(timeout: .seconds(5))
        }

        XCTAssertEqual(try roundTrip(), [42])
        XCTAssertNoThrow(try XCTUnwrap(listener.nextOutcome()).get())

        server.disallow(client.id)
        XCTAssertThrowsError(try roundTrip())
        XCTAssertEqual(listener.nextOutcome()?.failure, .peerNotAllowed(client.id))

        server.allow(client.id)
        XCTAssertEqual(try roundTrip(), [42])
        XCTAssertNoThrow(try XCTUnwrap(listener.nextOutcome()).get())

        // And on the client side: un-pairing the server refuses it.
        client.disallow(server.id)
        XCTAssertEqual(transportError(try roundTrip()), .peerNotAllowed(server.id))
        XCTAssertNotNil(listener.nextOutcome()?.failure)
    }

    // MARK: Hostile or broken peers

    func testGarbageIsRefusedQuicklyAndTheListenerKeepsServing() throws {
        let server = try TestDevice(), client = try TestDevice()
        server.allow(client.id)
        client.allow(server.id)
        let listener = try TestServer(device: server, serve: echo)

        let garbage: [[UInt8]] = [
            Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
            (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7919) },
            [0x16, 0x03, 0x01, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 100),  // a handshake record that lies about its size
            [0x16, 0x03, 0x03, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00],         // a ClientHello cut short
        ]
        for bytes in garbage {
            let started = ContinuousClock.now
            let raw = try RawTCPClient(port: listener.port)
            raw.send(bytes)
            let failure = try XCTUnwrap(listener.nextOutcome(within: 3)?.failure, "no outcome for \(bytes.prefix(8))")
            guard case .handshakeFailed = failure else { return XCTFail("unexpected \(failure)") }
            XCTAssertLessThan(ContinuousClock.now - started, .seconds(2), "\(failure)")
            _ = raw
        }

        let connection = try TLSConnection.connect(host: "127.0.0.1", port: listener.port, context: client.context,
                                                   timeout: .seconds(5))
        try connection.writeAll([7])
        XCTAssertEqual(try connection.read(timeout: .seconds(5)), [7])
        connection.close()
    }

    func testRandomBytesNeverCrashTheServer() throws {
        let server = try TestDevice(), client = try TestDevice()
        server.allow(client.id)
        client.allow(server.id)
        let listener = try TestServer(device: server, handshakeTimeout: .seconds(1), serve: echo)
        var generator = SystemRandomNumberGenerator()
        for round in 0..<60 {
            let length = Int.random(in: 0...600, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if round % 2 == 0 {
                // Half the rounds start like a TLS handshake record, to get past the first sanity checks.
                bytes = [0x16, 0x03, UInt8(round % 4), UInt8(length >> 8), UInt8(length & 0xFF), 0x01] + bytes
            }
            do {
                let raw = try RawTCPClient(port: listener.port)
                raw.send(bytes)
            }  // closed here: the server sees the end of the stream
            let outcome = try XCTUnwrap(listener.nextOutcome(within: 3), "round \(round)")
            XCTAssertNotNil(outcome.failure, "round \(round)")
        }
        let connection = try TLSConnection.connect(host: "127.0.0.1", port: listener.port, context: client.context,
                                                   timeout: .seconds(5))
        try connection.writeAll([7])
        XCTAssertEqual(try connection.read(timeout: .seconds(5)), [7])
        connection.close()
    }

    func testNoDescriptorLeaks() throws {
        let server = try TestDevice(), client = try TestDevice(), stranger = try TestDevice()
        server.allow(client.id)
        client.allow(server.id)
        stranger.allow(server.id)
        let listener = try TestServer(device: server, serve: echo)
        let before = openDescriptorCount()
        for round in 0..<20 {
            let device = round % 2 == 0 ? client : stranger
            if let connection = try? TLSConnection.connect(host: "127.0.0.1", port: listener.port,
                                                           context: device.context, timeout: .seconds(5)) {
                try? connection.writeAll([1])
                _ = try? connection.read(timeout: .seconds(5))
                connection.close()
            }
            _ = listener.nextOutcome()
            do {
                let raw = try RawTCPClient(port: listener.port)
                raw.send([0x47, 0x45, 0x54])
            }  // closed: the server sees a truncated first record
            XCTAssertNotNil(listener.nextOutcome()?.failure)
        }
        // Server threads finish asynchronously; give them a moment.
        let deadline = ContinuousClock.now + .seconds(3)
        while openDescriptorCount() > before && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTAssertLessThanOrEqual(openDescriptorCount(), before)
    }

    func testStalledHandshakeTimesOutWithoutBlockingOthers() throws {
        let server = try TestDevice(), client = try TestDevice()
        server.allow(client.id)
        client.allow(server.id)
        let timeout = Duration.milliseconds(600)
        let listener = try TestServer(device: server, handshakeTimeout: timeout, serve: echo)

        let started = ContinuousClock.now
        let silent = try RawTCPClient(port: listener.port)  // connects, then says nothing
        // While it stalls, a good client is served.
        let connection = try TLSConnection.connect(host: "127.0.0.1", port: listener.port, context: client.context,
                                                   timeout: .seconds(5))
        XCTAssertEqual(try XCTUnwrap(listener.nextOutcome()).get().peerID, client.id)
        connection.close()

        XCTAssertEqual(listener.nextOutcome(within: 3)?.failure, .handshakeTimedOut(after: timeout))
        let elapsed = ContinuousClock.now - started
        XCTAssertGreaterThanOrEqual(elapsed, timeout)
        XCTAssertLessThan(elapsed, timeout + .seconds(1))
        _ = silent
    }

    func testTrickleCannotStretchTheHandshake() throws {
        let server = try TestDevice()
        let timeout = Duration.milliseconds(500)
        let listener = try TestServer(device: server, handshakeTimeout: timeout)
        let started = ContinuousClock.now
        let raw = try RawTCPClient(port: listener.port)
        // A plausible record header, then one byte every 100 ms: each read makes progress, the deadline still holds.
        let trickle = Thread {
            raw.send([0x16, 0x03, 0x01, 0x01, 0x00])
            for _ in 0..<30 {
                Thread.sleep(forTimeInterval: 0.1)
                raw.send([0x01])
            }
        }
        trickle.start()
        XCTAssertEqual(listener.nextOutcome(within: 3)?.failure, .handshakeTimedOut(after: timeout))
        XCTAssertLessThan(ContinuousClock.now - started, timeout + .seconds(1))
    }

    func testTLS12ClientIsRefused() throws {
        let server = try TestDevice(), client = try TestDevice()
        server.allow(client.id)
        let listener = try TestServer(device: server)
        let files = try OpenSSLTool.files(for: client.identity)
        let (status, output) = try OpenSSLTool.runBounded([
            "s_client", "-connect", "127.0.0.1:\(listener.port)", "-tls1_2", "-cert", files.cert, "-key", files.key,
        ])
        XCTAssertNotEqual(status, 0, output)
        let failure = try XCTUnwrap(listener.nextOutcome()?.failure)
        guard case .handshakeFailed(let detail) = failure else { return XCTFail("unexpected \(failure)") }
        XCTAssertTrue(detail.contains("protocol"), detail)
    }

    func testClientWithoutCertificateIsRefused() throws {
        let server = try TestDevice()
        let listener = try TestServer(device: server)
        _ = try OpenSSLTool.runBounded(["s_client", "-connect", "127.0.0.1:\(listener.port)", "-tls1_3"])
        XCTAssertEqual(listener.nextOutcome()?.failure, .peerPresentedNoCertificate)
    }

    // MARK: Timeouts, shutdown, close

    func testReadTimeoutLeavesTheConnectionUsable() throws {
        let (connection, accepted, server) = try connectedPair()
        defer { withExtendedLifetime(server) {} }
        XCTAssertEqual(transportError(try connection.read(timeout: .milliseconds(100))),
                       .readTimedOut(after: .milliseconds(100)))
        try accepted.writeAll([9, 8])
        XCTAssertEqual(try connection.readExactly(2, timeout: .seconds(5)), [9, 8])
    }

    func testShutdownFromAnotherThreadUnblocksARead() throws {
        let (connection, accepted, server) = try connectedPair()
        defer { withExtendedLifetime((accepted, server)) {} }  // the peer must stay silent, not close
        let blocked = DispatchSemaphore(value: 0)
        let outcome = Locked<TransportError?>(nil)
        Thread.detachNewThread {
            blocked.signal()
            do throws(TransportError) {
                _ = try connection.read()  // no timeout: only shutdown can end it
            } catch {
                outcome.withLock { $0 = error }
            }
            blocked.signal()
        }
        blocked.wait()
        Thread.sleep(forTimeInterval: 0.1)
        connection.shutdown()
        XCTAssertEqual(blocked.wait(timeout: .now() + 2), .success, "read still blocked after shutdown()")
        XCTAssertEqual(outcome.withLock { $0 }, .connectionClosedLocally)
        XCTAssertEqual(transportError(try connection.writeAll([1])), .connectionClosedLocally)
    }

    func testCloseFromAnotherThreadUnblocksARead() throws {
        let (connection, accepted, server) = try connectedPair()
        defer { withExtendedLifetime((accepted, server)) {} }
        let done = DispatchSemaphore(value: 0)
        let outcome = Locked<TransportError?>(nil)
        Thread.detachNewThread {
            do throws(TransportError) {
                _ = try connection.read()
            } catch {
                outcome.withLock { $0 = error }
            }
            done.signal()
        }
        Thread.sleep(forTimeInterval: 0.1)
        connection.close()
        XCTAssertEqual(done.wait(timeout: .now() + 2), .success, "read still blocked after close()")
        XCTAssertEqual(outcome.withLock { $0 }, .connectionClosedLocally)
        // The peer got a clean goodbye.
        XCTAssertEqual(try accepted.read(timeout: .seconds(2)), [])
        XCTAssertEqual(transportError(try connection.read()), .connectionClosedLocally)
    }

    func testPeerVanishingIsReported() throws {
        let (connection, accepted, server) = try connectedPair()
        defer { withExtendedLifetime(server) {} }
        accepted.shutdown()  // no close_notify: looks like a crash to the other side
        let error = transportError(try connection.read(timeout: .seconds(5)))
        guard case .connectionLost = error else { return XCTFail("\(String(describing: error))") }
    }

    func testListenerCloseUnblocksAccept() throws {
        let device = try TestDevice()
        let listener = try TLSListener.bind(host: "127.0.0.1", port: 0, context: device.context)
        XCTAssertNotEqual(listener.port, 0)
        let done = DispatchSemaphore(value: 0)
        let outcome = Locked<TransportError?>(nil)
        Thread.detachNewThread {
            do throws(TransportError) {
                _ = try listener.accept()
            } catch {
                outcome.withLock { $0 = error }
            }
            done.signal()
        }
        Thread.sleep(forTimeInterval: 0.1)
        listener.close()
        XCTAssertEqual(done.wait(timeout: .now() + 2), .success, "accept still blocked after close()")
        XCTAssertEqual(outcome.withLock { $0 }, .listenerClosed)
    }

    func testConnectErrors() throws {
        let device = try TestDevice()
        // A port nobody listens on: bind one, note it, close it.
        let probe = try TLSListener.bind(host: "127.0.0.1", port: 0, context: device.context)
        let port = probe.port
        probe.close()
        let error = transportError(try TLSConnection.connect(host: "127.0.0.1", port: port, context: device.context,
                                                              timeout: .seconds(2)))
        guard case .connectFailed = error else { return XCTFail("\(String(describing: error))") }

        let taken = try TLSListener.bind(host: "127.0.0.1", port: 0, context: device.context)
        let bindError = transportError(try TLSListener.bind(host: "127.0.0.1", port: taken.port,
                                                            context: device.context))
        guard case .bindFailed = bindError else { return XCTFail("\(String(describing: bindError))") }
        // Another port is the advice for a port in use only; out of descriptors, another would fail alike.
        XCTAssertTrue(bindError!.description.contains("choose another port"), bindError!.description)
        let outOfDescriptors = TransportError.bindFailed(host: "127.0.0.1", port: 1, detail: String(cString: strerror(EMFILE)))
        XCTAssertFalse(outOfDescriptors.description.contains("choose another port"), outOfDescriptors.description)
    }

    /// A host with several addresses: the first silently drops the connection (a listener whose queue is full
    /// answers no SYN, as a firewall or a vanished network does), or the device there is not the one dialed;
    /// the dial moves on to the next address within the same timeout (found by review: it gave up at the first).
    func testEachAddressOfAHostIsTriedWithinTheTimeout() throws {
        let server = try TestDevice(), client = try TestDevice(), stranger = try TestDevice()
        server.allow(client.id)
        client.allow(server.id)
        client.allow(stranger.id)
        stranger.allow(client.id)
        let live = try TestServer(device: server, serve: echo)

        // A listener that never accepts, its queue filled: further connects hang with no answer.
        let silent = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(silent) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(silent, $0, length) } }
        XCTAssertEqual(listen(silent, 0), 0)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(silent, $0, &length) } }
        let silentPort = UInt16(bigEndian: address.sin_port)
        var fillers: [Int32] = []
        defer { fillers.forEach { close($0) } }
        for _ in 0..<4 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, length) } }
            fillers.append(filler)
        }
        let dropping = try SocketSupport.resolve(host: "127.0.0.1", port: silentPort, passive: false)
        let working = try SocketSupport.resolve(host: "127.0.0.1", port: live.port, passive: false)

        let started = ContinuousClock.now
        let connection = try TLSConnection.connect(to: dropping + working, host: "peer.example", port: live.port, context: client.context,
                                                   expectedPeer: server.id, timeout: .seconds(2))
        XCTAssertEqual(connection.peerID, server.id)
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(2))
        try connection.writeAll([7])
        XCTAssertEqual(try connection.readExactly(1, timeout: .seconds(5)), [7])
        connection.close()

        // Another device at the first address: the dial goes on to the one it expects.
        let other = try TestServer(device: stranger)
        let atOther = try SocketSupport.resolve(host: "127.0.0.1", port: other.port, passive: false)
        let right = try TLSConnection.connect(to: atOther + working, host: "peer.example", port: live.port, context: client.context,
                                              expectedPeer: server.id, timeout: .seconds(2))
        XCTAssertEqual(right.peerID, server.id)
        right.close()

        // Every address failing: the error names the address it came from.
        let error = transportError(try TLSConnection.connect(to: dropping + dropping, host: "peer.example", port: silentPort,
                                                             context: client.context, expectedPeer: server.id, timeout: .seconds(1)))
        guard case .connectTimedOut(let host, _, _)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertTrue(host.contains("peer.example (address 127.0.0.1:\(silentPort))"), host)
    }

    /// A host with several addresses is listened on at each, on one port, numeric in `addresses`: "" is both
    /// wildcards (0.0.0.0 and ::), and a client reaches the listener over IPv4 and over IPv6. Found by review:
    /// a name was listened on at its first address only, and a peer paired with another was refused.
    func testAListenerHoldsEveryAddressOfItsHost() throws {
        let server = try TestDevice(), client = try TestDevice()
        server.allow(client.id)
        client.allow(server.id)
        guard try SocketSupport.resolve(host: "", port: 0, passive: true).count == 2 else { throw XCTSkip("the wildcard is not two addresses here") }
        let listening = try TestServer(device: server, host: "")
        let port = listening.port
        XCTAssertEqual(listening.listener.addresses.sorted(), ["0.0.0.0:\(port)", "[::]:\(port)"])
        XCTAssertEqual(listening.listener.addressesNotBound, [])
        for host in ["127.0.0.1", "::1", "127.0.0.1"] {
            let connection = try TLSConnection.connect(host: host, port: port, context: client.context, expectedPeer: server.id, timeout: .seconds(5))
            defer { connection.close() }
            guard case .success? = listening.nextOutcome() else { return XCTFail("no handshake arrived over \(host)") }
        }
        let numeric = try TLSListener.bind(host: "127.0.0.1", port: 0, context: server.context)
        defer { numeric.close() }
        XCTAssertEqual(numeric.addresses, ["127.0.0.1:\(numeric.port)"])
        XCTAssertEqual(numeric.address, "127.0.0.1:\(numeric.port)")
        XCTAssertEqual(numeric.addressesNotBound, [])
    }

    /// A port another program holds on one of the host's addresses fails the whole bind, naming that address:
    /// a peer dialing it would reach the other program. Closing the listener wakes `accept`.
    func testAPortTakenOnOneAddressFailsTheBind() throws {
        let device = try TestDevice()
        guard try SocketSupport.resolve(host: "", port: 0, passive: true).count == 2 else { throw XCTSkip("the wildcard is not two addresses here") }
        let taken = try TLSListener.bind(host: "127.0.0.1", port: 0, context: device.context)
        defer { taken.close() }
        let error = transportError(try TLSListener.bind(host: "", port: taken.port, context: device.context))
        XCTAssertEqual(error, .bindFailed(host: "0.0.0.0", port: taken.port, detail: String(cString: strerror(EADDRINUSE))))
        // Nothing of the failed bind is left holding the port: once the other program lets go, both bind.
        taken.close()
        let both = try TLSListener.bind(host: "", port: taken.port, context: device.context)
        XCTAssertEqual(both.addresses.count, 2)
        both.close()
    }

    // MARK: Helpers

    private func openDescriptorCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
    }

    /// A client connection, the server's accepted end, and the server (kept alive by the caller).
    private func connectedPair() throws -> (TLSConnection, TLSConnection, TestServer) {
        let server = try TestDevice(), client = try TestDevice()
        server.allow(client.id)
        client.allow(server.id)
        let listener = try TestServer(device: server)
        let connection = try TLSConnection.connect(host: "127.0.0.1", port: listener.port, context: client.context,
                                                   timeout: .seconds(5))
        let accepted = try XCTUnwrap(listener.nextOutcome()).get()
        return (connection, accepted, listener)
    }
}
