import Foundation
import GroupSyncCore
import GroupSyncDaemon
import GroupSyncStore
import GroupSyncTestSupport
import Testing

/// The daemon's local control socket: JSON lines, many requests per connection, writes group-committed.
@Suite(.serialized) struct ControlSocketTests {
    /// Found by review: a daemon whose home was moved aside, and a new home made at the same path with a daemon
    /// of its own, removed that daemon's socket when it stopped: no command could reach the new daemon again.
    @Test func aStoppingDaemonLeavesTheSocketOfTheHomeNowAtItsPathAlone() throws {
        let folder = TemporaryFolder()
        let moved = try TestDevice("home", in: folder)
        try moved.start()
        try FileManager.default.moveItem(atPath: moved.cli.home, toPath: folder.path + "/aside")
        let fresh = try TestDevice("home", in: folder)
        try fresh.start()
        #expect(moved.stop() != nil, "the daemon of the home moved aside stopped")
        let status = try fresh.status()
        #expect(status["answering"] == .bool(true) && status["id"] == .string(fresh.id), "\(status)")
        #expect(try fresh.cli.run("status").stdout.contains("running, listening on"))
    }

    /// Found by review: with the daemon stopped (SIGSTOP, Ctrl-Z) and its listen queue full, `notify`, `status`,
    /// `fire` and `balance spend` hung in `connect` for good. The command's 5 s deadline covers connecting.
    @Test func aCommandGivesUpOnADaemonThatAcceptsNothing() throws {
        let folder = TemporaryFolder()
        let device = try TestDevice("a", in: folder)
        // A socket that listens and never accepts, its queue filled: what a stopped daemon's becomes.
        let path = device.cli.home + "/control.sock"
        let listener = try #require(UnixSocketSupport.listener(at: path, backlog: 0))
        var queued: [Int32] = []
        while queued.count < 64 {
            let client = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            _ = fcntl(client, F_SETFL, O_NONBLOCK)
            guard UnixSocketSupport.connect(client, to: path) == 0 else { close(client); break }
            queued.append(client)
        }
        defer { for fd in queued + [listener] { close(fd) } }
        #expect(queued.count < 64, "the queue filled")

        let started = Date()
        let result = try device.cli.run(["timeout", "-s", "KILL", "30", GroupSyncBinary.path, "notify", "post", "--id", "x", "--title", "t"],
                                        executable: "/usr/bin/env")
        let seconds = Date().timeIntervalSince(started)
        #expect(seconds < 15, "exit \(result.status) after \(seconds) s")
        #expect(result.status == 3 && result.stderr.contains("daemon"), "\(result.status) \(result.stderr)")
    }

    @Test func clientsWriteAndReadThroughTheDaemon() throws {
        let folder = TemporaryFolder()
        let device = try TestDevice("a", in: folder)
        try device.start()
        let client = try UnixClient(path: device.cli.home + "/control.sock")
        #expect(client.request(#"{"command":"set","suite":"s","key":"d","type":"double","value":7}"#).contains(#""ok":true"#))
        #expect(client.request(#"{"command":"set","suite":"s","key":"t","type":"date","value":"2026-11-29T13:15:00Z"}"#).contains(#""ok":true"#))
        #expect(client.request(#"{"command":"get","suite":"s","key":"d"}"#).contains(#""type":"double","value":7.0"#))
        #expect(try device.get("t", suite: "s") == "2026-11-29T13:15:00Z")
        #expect(client.request(#"{"command":"delete","suite":"s","key":"d"}"#).contains(#""ok":true"#))
        #expect(client.request(#"{"command":"delete","suite":"s","key":"d"}"#).contains(#""notFound":true"#))
        // Bad requests get an error line and change nothing; the connection stays usable.
        for bad in ["nonsense", #"{"command":"frob"}"#, #"{"command":"set","suite":"s","key":"x","type":"int","value":"7"}"#,
                    #"{"command":"set","suite":"","key":"x","type":"int","value":7}"#, #"{"command":"set","suite":"s","key":"x","type":"date","value":"soon"}"#,
                    // GroupSync's own notification IDs are not an app's (CONTROL.md).
                    #"{"command":"notify-post","id":"groupsync.timesUp","title":"mine"}"#, #"{"command":"notify-dismiss","id":"groupsync.countdown"}"#,
                    // Mistyped placeholders are refused, not taken as none (found by audit).
                    #"{"command":"notify-post","id":"t","title":"{activityName}","placeholders":"Focus"}"#,
                    #"{"command":"notify-post","id":"t","title":"{activityName}","placeholders":["Focus"]}"#,
                    #"{"command":"notify-post","id":"t","title":"{activityName}","placeholders":{"activityName":7}}"#,
                    // Names the store refuses are the client's mistake here too, as on the command line (found by review).
                    #"{"command":"notify-shield","suite":"","configKey":"cfg","app":"x"}"#,
                    #"{"command":"notify-shield","suite":"s","configKey":"a\u0001b","app":"x"}"#,
                    #"{"command":"notify-actions","suite":""}"#] {
            // Refused as the client's mistake (badInput), not as a failing daemon (CONTROL.md).
            let answer = client.request(bad)
            #expect(answer.contains(#""ok":false"#) && answer.contains(#""badInput":true"#), "\(bad): \(answer)")
        }
        #expect(try device.get("x", suite: "s") == nil)
        // A double as JSON encoders write it: -0 keeps its sign, and 1e20 in digits (JavaScript's and Go's
        // form) is a number, as `set --double` takes them; as an int it is too large (found by review).
        #expect(client.request(#"{"command":"set","suite":"s","key":"z","type":"double","value":-0}"#).contains(#""ok":true"#))
        #expect(try device.get("z", suite: "s") == "-0.0")
        #expect(client.request(#"{"command":"set","suite":"s","key":"e","type":"double","value":100000000000000000000}"#).contains(#""ok":true"#))
        #expect(try device.get("e", suite: "s") == "1e+20")
        let tooLarge = client.request(#"{"command":"set","suite":"s","key":"x","type":"int","value":100000000000000000000}"#)
        #expect(tooLarge.contains(#""badInput":true"#) && tooLarge.contains("does not fit in 64 bits"), "\(tooLarge)")
        // A value as deep as `get --json` prints one is taken back: the request's object is not a level of it.
        let deepest = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(client.request(#"{"command":"set","suite":"s","key":"deep","type":"array","value":"# + deepest + "}").contains(#""ok":true"#))
        let tooDeep = client.request(#"{"command":"set","suite":"s","key":"x","type":"array","value":["# + deepest + "]}")
        #expect(tooDeep.contains(#""badInput":true"#) && tooDeep.contains("nested deeper than 64"), "\(tooDeep)")
        // A read of a name the store refuses is the client's mistake, as a write of it is, not a missing key.
        for bad in [#"{"command":"get","suite":"","key":"x"}"#, #"{"command":"get","suite":"s","key":"a\nb"}"#] {
            let answer = client.request(bad)
            #expect(answer.contains(#""badInput":true"#) && !answer.contains("notFound"), "\(bad): \(answer)")
        }
        #expect(try device.get("x", suite: "s") == nil)
        #expect(client.request(#"{"command":"get","suite":"s","key":"t"}"#).contains("2026-11-29T13:15:00Z"))
        // CONTROL.md: unknown fields are ignored, and a null one is no different; a null value is a missing one.
        #expect(client.request(#"{"command":"get","suite":"s","key":"t","trace":null}"#).contains("2026-11-29T13:15:00Z"))
        #expect(client.request(#"{"command":"get","suite":"s","key":"t","trace":[null,{"a":null}]}"#).contains("2026-11-29T13:15:00Z"))
        #expect(client.request(#"{"command":"set","suite":"s","key":"n","type":"int","value":1,"extra":null}"#).contains(#""ok":true"#))
        let nullValue = client.request(#"{"command":"set","suite":"s","key":"x","type":"int","value":null}"#)
        #expect(nullValue.contains(#""ok":false"#) && nullValue.contains("value"), "\(nullValue)")
        // A null inside the value is not a request field: refused like `set --json`, not dropped from it.
        let nullMember = client.request(#"{"command":"set","suite":"s","key":"x","type":"dictionary","value":{"title":"t","subtitle":null}}"#)
        #expect(nullMember.contains(#""ok":false"#) && nullMember.contains("JSON that cannot be stored") && nullMember.contains("null"), "\(nullMember)")
        #expect(!nullMember.contains("invalid JSON"), "well-formed JSON is not called invalid: \(nullMember)")
        // The request's own faults are said of the request, not of a value that cannot be stored.
        let bareNull = client.request("null")
        #expect(bareNull.contains(#""badInput":true"#) && bareNull.contains("a request is a JSON object, not null"), "\(bareNull)")
        let twice = client.request(#"{"command":"set","suite":"s","key":"x","key":"y","type":"int","value":1}"#)
        #expect(twice.contains(#""badInput":true"#) && twice.contains("the member 'key' is given twice"), "\(twice)")
        #expect(!twice.contains("cannot be stored"), "\(twice)")
        // A bare number is named as JSON has it, whichever Swift type held it.
        let numberAsString = client.request(#"{"command":"set","suite":"s","key":"x","type":"string","value":100000000000000000000}"#)
        #expect(numberAsString.contains("a number JSON value cannot be stored as type 'string'"), "\(numberAsString)")
        // Malformed JSON is answered with where and why, not a guess.
        let broken = client.request(#"{"command":"get","suite":"s","key":}"#)
        #expect(broken.contains(#""ok":false"#) && broken.contains("invalid JSON at byte"), "\(broken)")
        #expect(try device.get("x", suite: "s") == nil)
    }

    /// `ControlConnection`, the client the CLI and apps use: pipelined requests answered in order, and a
    /// daemon that accepts but never answers costs the timeout (the client waits in `poll`), not a hang.
    @Test func theSwiftClientPipelinesAndGivesUpOnADaemonThatNeverAnswers() throws {
        let folder = TemporaryFolder()
        let device = try TestDevice("a", in: folder)
        try device.start()
        let connection = try #require(ControlConnection(home: Home(path: device.cli.home)))
        let answers = try #require(connection.requests((0..<3).map { #"{"command":"set","suite":"s","key":"k\#($0)","type":"int","value":\#($0)}"# }))
        #expect(answers.count == 3 && answers.allSatisfy { $0.contains(#""ok":true"#) })
        let sequences = answers.compactMap { answer in
            answer.firstRange(of: #""sequence":"#).flatMap { Int(answer[$0.upperBound...].prefix { $0.isNumber }) }
        }
        #expect(sequences.count == 3 && sequences == sequences.sorted() && Set(sequences).count == 3)  // in request order
        #expect(connection.request(#"{"command":"get","suite":"s","key":"k2"}"#)?.contains(#""value":2"#) == true)

        let silentHome = folder.path + "/silent"
        try FileManager.default.createDirectory(atPath: silentHome, withIntermediateDirectories: true)
        // Connections complete in the backlog, unanswered.
        let listener = try #require(UnixSocketSupport.listener(at: silentHome + "/control.sock", backlog: 4))
        defer { close(listener) }
        let silent = try #require(ControlConnection(home: Home(path: silentHome), timeoutSeconds: 1))
        let start = Date()
        #expect(silent.request(#"{"command":"status"}"#) == nil)
        let waited = Date().timeIntervalSince(start)
        #expect(waited >= 0.9 && waited < 4, "waited \(waited) s")
    }

    @Test func concurrentClientsAreGroupCommittedAndLoseNothing() throws {
        let folder = TemporaryFolder()
        let device = try TestDevice("a", in: folder)
        try device.start()
        let clients = 8, perClient = 250
        let failures = Counter()
        let socketPath = device.cli.home + "/control.sock"
        let start = Date()
        DispatchQueue.concurrentPerform(iterations: clients) { c in
            guard let client = try? UnixClient(path: socketPath) else { failures.add(); return }
            for i in 0..<perClient where !client.request(#"{"command":"set","suite":"load","key":"c\#(c)-\#(i)","type":"int","value":\#(i)}"#).contains(#""ok":true"#) {
                failures.add()
            }
        }
        let seconds = Date().timeIntervalSince(start)
        #expect(failures.value == 0)
        #expect(try device.cli.run("list", "load").lines.count == clients * perClient)
        print("control socket: \(clients * perClient) acknowledged durable writes from \(clients) clients in \(String(format: "%.2f", seconds)) s (debug build)")
    }

    /// Many writes in flight on one connection, from several clients at once: every one is answered, in
    /// order, with its own sequence, and each answer means the write is there.
    @Test func pipelinedWritesFromSeveralClientsAreAnsweredInOrder() throws {
        let folder = TemporaryFolder()
        let device = try TestDevice("a", in: folder)
        try device.start()
        let clients = 4, rounds = 20, window = 16
        let failures = Counter()
        let socketPath = device.cli.home + "/control.sock"
        DispatchQueue.concurrentPerform(iterations: clients) { c in
            guard let client = try? UnixClient(path: socketPath) else { failures.add(); return }
            var lastSequence = 0
            for round in 0..<rounds {
                let lines = (0..<window).map { #"{"command":"set","suite":"pipe","key":"c\#(c)-\#(round)-\#($0)","type":"int","value":\#($0)}"# }
                let answers = client.requests(lines)
                guard answers.count == window else { failures.add(); return }
                for answer in answers {
                    // Sequences grow within a connection: the answers come back in the order of the requests.
                    guard answer.contains(#""ok":true"#), let sequence = Self.sequence(in: answer), sequence > lastSequence else { failures.add(); continue }
                    lastSequence = sequence
                }
            }
        }
        #expect(failures.value == 0)
        #expect(try device.cli.run("list", "pipe").lines.count == clients * rounds * window)
    }

    /// Writes and reads mixed in one pipelined send: answered in order, and each read sees the writes before it.
    /// (The daemon commits a client's leading writes with everyone's, and answers the rest on a worker.)
    @Test func pipelinedReadsSeeTheWritesBeforeThem() throws {
        let folder = TemporaryFolder()
        let device = try TestDevice("a", in: folder)
        try device.start()
        let client = try UnixClient(path: device.cli.home + "/control.sock")
        let other = try UnixClient(path: device.cli.home + "/control.sock")
        for round in 0..<5 {
            let answers = client.requests([
                #"{"command":"set","suite":"mix","key":"k","type":"int","value":\#(round * 2)}"#,
                #"{"command":"get","suite":"mix","key":"k"}"#,
                #"{"command":"status"}"#,
                #"{"command":"set","suite":"mix","key":"k","type":"int","value":\#(round * 2 + 1)}"#,
                #"{"command":"get","suite":"mix","key":"k"}"#,
                "not json",
            ])
            #expect(answers.count == 6)
            #expect(answers[0].contains(#""ok":true"#))
            #expect(answers[1].contains(#""value":\#(round * 2)"#), "\(answers[1])")
            #expect(answers[2].contains(#""listen""#), "\(answers[2])")
            #expect(answers[3].contains(#""ok":true"#))
            #expect(answers[4].contains(#""value":\#(round * 2 + 1)"#), "\(answers[4])")
            #expect(answers[5].contains(#""ok":false"#))
            // Another client is served meanwhile, and after.
            #expect(other.request(#"{"command":"set","suite":"mix","key":"o\#(round)","type":"int","value":1}"#).contains(#""ok":true"#))
        }
        #expect(try device.cli.run("list", "mix").lines.count == 6)
    }

    /// A request may arrive in pieces, and invalid writes may sit among valid ones: a line is parsed once it
    /// is complete, an invalid write gets its error without holding up the others, and answers keep their order.
    @Test func requestsInPiecesAndInvalidWritesAreAnsweredInOrder() throws {
        let folder = TemporaryFolder()
        let device = try TestDevice("a", in: folder)
        try device.start()
        let client = try UnixClient(path: device.cli.home + "/control.sock")
        let line = #"{"command":"set","suite":"parts","key":"k","type":"int","value":7}"#
        let cut = line.index(line.startIndex, offsetBy: 20)
        client.send(Array(line[..<cut].utf8))
        usleep(50_000)  // the daemon reads the first piece alone
        let answers = client.requests([
            String(line[cut...]),
            #"{"command":"set","suite":"parts","key":"bad","type":"int","value":"seven"}"#,
            #"{"command":"set","suite":"parts","key":"k2","type":"int","value":8}"#,
        ])
        #expect(answers.count == 3)
        #expect(answers[0].contains(#""ok":true"#), "\(answers[0])")
        #expect(answers[1].contains(#""ok":false"#), "\(answers[1])")
        #expect(answers[2].contains(#""ok":true"#), "\(answers[2])")
        #expect(client.request(#"{"command":"get","suite":"parts","key":"k"}"#).contains(#""value":7"#))
        #expect(try device.cli.run("list", "parts").lines.count == 2)
    }

    /// A client that streams requests and never reads its answers is held back by its own socket, not by
    /// the daemon's memory: the loop stops reading it once its answers back up.
    @Test func aClientThatNeverReadsItsAnswersCannotGrowTheDaemon() throws {
        let folder = TemporaryFolder()
        let device = try TestDevice("a", in: folder)
        try device.start()
        let pid = try #require(device.daemon?.pid)
        let before = try ProcFS.statusField(pid, "VmRSS:")
        let client = try UnixClient(path: device.cli.home + "/control.sock")
        client.setNonBlocking()
        let line = Array(#"{"command":"set","suite":"flood","key":"k","type":"string","value":"\#(String(repeating: "x", count: 200))"}"#.utf8) + [10]
        let batch = Array([[UInt8]](repeating: line, count: 256).joined())
        var sent = 0
        let deadline = Date().addingTimeInterval(4)
        while sent < 64 << 20, Date() < deadline {
            let n = client.sendSome(batch)
            if n > 0 { sent += n } else { usleep(2_000) }
        }
        let grown = try ProcFS.statusField(pid, "VmRSS:") - before
        #expect(grown < 100 * 1024, "the daemon grew by \(grown / 1024) MB while a client sent \(sent >> 20) MB it never read answers for")
        #expect(sent < 32 << 20, "the daemon stopped taking requests from it (it took \(sent >> 20) MB)")
        #expect(try device.cli.run("status").status == 0, "others are still served")
    }

    /// A client that pipelines many `get`s of a large value and reads none of the answers makes the daemon
    /// hold about one answer, not one per request (found by audit: 100 `get`s of a 1 MiB value grew it by
    /// 410 MB until the client left). Others are served meanwhile.
    @Test func pipelinedLargeReadsNeverReadCannotGrowTheDaemon() throws {
        let folder = TemporaryFolder()
        let device = try TestDevice("a", in: folder)
        try device.start()
        let pid = try #require(device.daemon?.pid)
        let store = try Store(path: device.cli.home + "/store.db", device: try DeviceID(parsing: device.id))
        try store.set(.string(String(repeating: "x", count: Store.maxValueBytes - 16)), suite: "s", key: "big")
        let before = try ProcFS.statusField(pid, "VmHWM:")
        let client = try UnixClient(path: device.cli.home + "/control.sock")
        let gets = String(repeating: #"{"command":"get","suite":"s","key":"big"}"# + "\n", count: 60)
        #expect(client.send(Array(gets.utf8)))
        Thread.sleep(forTimeInterval: 3)  // time to make every answer, as the daemon did before
        #expect(try device.cli.run("status").status == 0, "others are still served")
        let grown = try ProcFS.statusField(pid, "VmHWM:") - before
        #expect(grown < 48 * 1024, "the daemon's peak grew by \(grown / 1024) MB for 60 unread answers of 1 MiB")
        print("60 unread answers of 1 MiB: the daemon's peak resident memory grew by \(grown / 1024) MB")
        // The client goes (its deinit closes the socket) and the daemon carries on.
    }

    /// Bad bytes and over-long lines get an error answer, never a repaired or truncated request.
    @Test func invalidUTF8AndOverLongLinesAreRefusedWithAnAnswer() throws {
        let folder = TemporaryFolder()
        let device = try TestDevice("a", in: folder)
        try device.start()
        let client = try UnixClient(path: device.cli.home + "/control.sock")
        let bad = Array(#"{"command":"set","suite":"s","key":"k"#.utf8) + [0xFF, 0xFE] + Array(#"","type":"int","value":1}"#.utf8)
        client.send(bad + [10] + Array(#"{"command":"get","suite":"s","key":"k"}"#.utf8) + [10])
        let answers = [client.nextAnswer(), client.nextAnswer()]
        #expect(answers[0].contains("not valid UTF-8"), "\(answers[0])")
        #expect(answers[1].contains(#""notFound":true"#), "nothing stored: \(answers[1])")
        #expect(try device.cli.run("list", "s").stdout.isEmpty)
        // An over-long line is answered and skipped however its bytes arrive, in one write or several apart,
        // and the connection goes on (it was closed when the line came in several reads; found by review).
        for parts in [1, 3] {
            let long = try UnixClient(path: device.cli.home + "/control.sock")
            let line = [UInt8](repeating: 0x20, count: (1 << 20) + 4096)
            let size = line.count / parts + 1
            for start in stride(from: 0, to: line.count, by: size) {
                #expect(long.send(Array(line[start..<min(start + size, line.count)])))
                if parts > 1 { Thread.sleep(forTimeInterval: 0.2) }
            }
            long.send(Array("\n{\"command\":\"get\",\"suite\":\"s\",\"key\":\"k\"}\n".utf8))
            let refused = long.nextAnswer()
            #expect(refused.contains("longer than") && refused.contains(#""badInput":true"#), "\(refused.prefix(200))")
            #expect(long.nextAnswer().contains(#""notFound":true"#), "the next request is answered")
        }
        // A last line without its newline is still a request: answered once the client ends its stream.
        let last = try UnixClient(path: device.cli.home + "/control.sock")
        last.send(Array(#"{"command":"get","suite":"s","key":"k"}"#.utf8))
        last.finishSending()
        #expect(last.nextAnswer().contains(#""notFound":true"#))
    }

    /// The client reads answers longer than a request may be: a `get` of a value at the store's 1 MiB limit,
    /// made of bytes JSON escapes, is about 6 MiB long.
    @Test func theSwiftClientReadsTheAnswerForTheLargestValue() throws {
        let folder = TemporaryFolder()
        let device = try TestDevice("a", in: folder)
        try device.start()
        let store = try Store(path: device.cli.home + "/store.db", device: try DeviceID(parsing: device.id))
        try store.set(.string(String(repeating: "\u{1}", count: Store.maxValueBytes - 16)), suite: "s", key: "big")
        let connection = try #require(ControlConnection(home: Home(path: device.cli.home)))
        let answer = try #require(connection.request(#"{"command":"get","suite":"s","key":"big"}"#))
        #expect(answer.utf8.count > 6 << 20 - 4096 && answer.contains(#""key":"big""#))
    }

    /// Out of file descriptors, the daemon refuses the connections it cannot take instead of spinning on a
    /// listening socket that stays readable.
    @Test func runningOutOfDescriptorsDoesNotSpinTheDaemon() throws {
        let folder = TemporaryFolder()
        let cli = GroupSyncBinary(home: folder.path + "/home")
        try cli.run("init")
        let daemon = try ChildProcess("/bin/sh", ["-c", #"ulimit -n 48 && exec "$0" --home "$1" serve --listen 127.0.0.1:0"#,
                                                   GroupSyncBinary.path, cli.home], stderr: .appendingTo(folder.path + "/daemon.log"))
        defer { daemon.terminate() }
        let socketPath = cli.home + "/control.sock"
        for _ in 0..<200 where access(socketPath, F_OK) != 0 { usleep(25_000) }
        var held: [UnixClient] = []
        for _ in 0..<80 { if let client = try? UnixClient(path: socketPath) { held.append(client) } }
        usleep(300_000)
        let busy = try ProcFS.cpuTicks(daemon.pid)
        usleep(1_000_000)
        let ticks = try ProcFS.cpuTicks(daemon.pid) - busy
        #expect(ticks < 20, "the daemon used \(ticks) of 100 CPU ticks in a second with \(held.count) connections held")
        let log = (try? String(contentsOfFile: folder.path + "/daemon.log", encoding: .utf8)) ?? ""
        #expect(log.contains("event=control-client-refused reason=\"out of file descriptors (Too many open files)\" action=close"), "\(log)")
        held.removeAll()
        usleep(300_000)
        #expect(try cli.run("status").status == 0, "served again once descriptors are free")
    }

    /// Found by review: a daemon that first signalled a commit once every descriptor was taken (here by idle
    /// control clients) could not open the signal file, and said nothing: a change from one peer was stored
    /// but reached neither its other peer nor a `watch`. The file is opened when the daemon starts.
    @Test func aDaemonOutOfDescriptorsStillPassesAPeersChangeOn() throws {
        let folder = TemporaryFolder()
        let hub = try TestDevice("hub", in: folder), p1 = try TestDevice("p1", in: folder), p2 = try TestDevice("p2", in: folder)
        for device in [hub, p1, p2] { try device.start() }
        for peer in [p1, p2] {
            try hub.pair(with: peer)
            try peer.pair(with: hub)
        }
        #expect(try hub.awaitConnected(to: p1) && hub.awaitConnected(to: p2))
        let pid = try #require(hub.daemon?.pid)
        let open = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
        _ = try ChildProcess("/usr/bin/prlimit", ["--pid", String(pid), "--nofile=\(open + 6):\(open + 6)"]).waitForExit()
        var held: [UnixClient] = []
        for _ in 0..<40 { if let client = try? UnixClient(path: hub.cli.home + "/control.sock") { held.append(client) } }
        usleep(300_000)
        defer { held.removeAll() }
        try p1.cli.run("set", "group.test", "k", "from p1")
        #expect(try p2.await("k", equals: "from p1", timeout: 10) != nil, "\(hub.log)")
    }

    /// Found by review: with the descriptor limit lowered below what the daemon already holds, giving up its
    /// reserve descriptor does not let it take a waiting connection either, and its loop spun at full CPU.
    @Test func aLimitLoweredBelowTheDescriptorsHeldDoesNotSpinTheDaemon() throws {
        let folder = TemporaryFolder()
        let device = try TestDevice("a", in: folder)
        try device.start()
        let pid = try #require(device.daemon?.pid)
        _ = try ChildProcess("/usr/bin/prlimit", ["--pid", String(pid), "--nofile=8:"]).waitForExit()
        let waiting = try UnixClient(path: device.cli.home + "/control.sock")
        usleep(300_000)
        let before = try ProcFS.cpuTicks(pid)
        usleep(1_000_000)
        let ticks = try ProcFS.cpuTicks(pid) - before
        #expect(ticks < 20, "the daemon used \(ticks) of 100 CPU ticks in a second")
        #expect(device.log.contains("event=control-accept-paused reason=\"out of file descriptors (Too many open files)\""), "\(device.log)")
        _ = try ChildProcess("/usr/bin/prlimit", ["--pid", String(pid), "--nofile=4096:"]).waitForExit()
        usleep(500_000)
        #expect(waiting.request(#"{"command":"get","suite":"s","key":"k"}"#).contains(#""notFound":true"#), "served once descriptors are there again")
    }

    /// Started with systemd's default soft limit of 1,024 descriptors, the daemon raises it (within the hard
    /// limit) so that its 1,024 clients fit beside its peers and files: only 993 were served before (found by
    /// review).
    @Test func theDaemonRaisesItsSoftDescriptorLimitWithinTheHardOne() throws {
        let folder = TemporaryFolder()
        let cli = GroupSyncBinary(home: folder.path + "/home")
        try cli.run("init")
        let daemon = try ChildProcess("/usr/bin/prlimit", ["--nofile=1024:4096", "--", GroupSyncBinary.path, "--home", cli.home, "serve", "--listen", "127.0.0.1:0"])
        defer { daemon.terminate() }
        for _ in 0..<200 where access(cli.home + "/control.sock", F_OK) != 0 { usleep(25_000) }
        let limits = try String(contentsOfFile: "/proc/\(daemon.pid)/limits", encoding: .utf8)
        let openFiles = limits.split(separator: "\n").first { $0.hasPrefix("Max open files") }?.split(separator: " ", omittingEmptySubsequences: true)
        #expect(openFiles.map { Array($0.suffix(3)) } == ["4096", "4096", "files"], "\(limits)")
    }

    private static func sequence(in answer: String) -> Int? {
        guard let range = answer.range(of: #""sequence":"#) else { return nil }
        return Int(answer[range.upperBound...].prefix { $0.isNumber })
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}

/// A blocking client of a Unix stream socket speaking JSON lines. Every connect, read and write gives up after
/// 10 s, and once a read has given up (or met the end) the next ones return at once: a daemon that stops
/// answering fails its test instead of stalling the whole run.
final class UnixClient {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var ended = false

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var limit = timeval(tv_sec: 10, tv_usec: 0)
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {   // SO_SNDTIMEO also bounds a connect to a full backlog
            setsockopt(fd, SOL_SOCKET, option, &limit, socklen_t(MemoryLayout<timeval>.size))
        }
        guard UnixSocketSupport.connect(fd, to: path) == 0 else { throw FixtureError("cannot connect to \(path)") }
    }

    deinit { close(fd) }

    func request(_ line: String) -> String {
        requests([line])[0]
    }

    /// Sends the lines in one write (pipelined) and reads as many answers; "" for each one missing.
    func requests(_ lines: [String]) -> [String] {
        guard send(Array((lines.joined(separator: "\n") + "\n").utf8)) else { return lines.map { _ in "" } }
        return lines.map { _ in nextLine() }
    }

    /// Writes raw bytes, which need not end a line; false if the socket refused them.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if n <= 0 { return false }
            written += n
        }
        return true
    }

    func setNonBlocking() { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }

    /// Ends this side's stream (the daemon reads its end) and keeps reading answers.
    func finishSending() { shutdown(fd, Int32(SHUT_WR)) }

    /// One write of what the socket takes now; 0 when it takes nothing.
    func sendSome(_ bytes: [UInt8]) -> Int {
        max(0, bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) })
    }

    func nextAnswer() -> String { nextLine() }

    private func nextLine() -> String {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !buffer.contains(10) {
            guard !ended else { return "" }
            let n = read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                ended = true
                return ""
            }
            buffer += chunk[0..<n]
        }
        let newline = buffer.firstIndex(of: 10)!
        defer { buffer.removeSubrange(...newline) }
        return String(decoding: buffer[..<newline], as: UTF8.self)
    }
}
