// swift-tools-version:6.0
import PackageDescription

// Dependency direction (SwiftNIO-style): the pure core knows nothing of I/O;
// the shells (SQLite store, OpenSSL transport, libnotify) wrap it; the daemon and the CLI wire them together.
let package = Package(
    name: "GroupSync",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "groupsync", targets: ["groupsync"]),
        .executable(name: "groupsync-bench", targets: ["GroupSyncBench"]),
    ],
    targets: [
        // C libraries from Debian, reached through tiny shim modules.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CNotify", pkgConfig: "libnotify", providers: [.apt(["libnotify-dev"])]),
        // Raw deflate for protocol version 2's `changes` bodies: pure computation, so the core may use it.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),

        // Pure, deterministic: values, clocks, merge rules, device IDs, JSON, the wire codec. No sockets, files or
        // wall clocks. Its one C dependency, zlib, only computes (deflate of `changes` bodies, `Wire/RawDeflate`).
        .target(name: "GroupSyncCore", dependencies: ["CZlib"]),
        // A SQLite VFS over the default one that writes a transaction's log frames in one write (C: a VFS is a
        // table of C function pointers over C structs).
        .target(name: "CBatchedLogVFS", dependencies: ["CSQLite"]),
        // SQLite shell: the durable, multi-process App Group store.
        .target(name: "GroupSyncStore", dependencies: ["GroupSyncCore", "CSQLite", "CBatchedLogVFS"]),
        // OpenSSL shell: device certificates and mutually authenticated TLS 1.3.
        .target(name: "GroupSyncTransport", dependencies: ["GroupSyncCore", "COpenSSL"]),
        // libnotify shell: desktop notifications over the D-Bus session bus.
        .target(name: "GroupSyncNotify", dependencies: ["GroupSyncCore", "CNotify"]),
        // The daemon: TLS listener and dialers, one PeerSession per connection, notifications, the control socket.
        .target(name: "GroupSyncDaemon", dependencies: ["GroupSyncCore", "GroupSyncStore", "GroupSyncTransport", "GroupSyncNotify"]),
        // The command line, as a library so tests can reach its parser.
        .target(name: "GroupSyncCLI", dependencies: ["GroupSyncCore", "GroupSyncStore", "GroupSyncTransport", "GroupSyncDaemon"]),
        .executableTarget(name: "groupsync", dependencies: ["GroupSyncCLI"]),
        // `make bench`: real daemons over loopback TLS against Redis, Yjs and raw SQLite (Benchmarks/README.md).
        // It may use Foundation; the shipped `groupsync` binary does not link it.
        .executableTarget(name: "GroupSyncBench",
                          dependencies: ["GroupSyncCore", "GroupSyncStore", "GroupSyncTransport", "GroupSyncDaemon", "CSQLite"],
                          path: "Benchmarks/GroupSyncBench",
                          swiftSettings: [.swiftLanguageMode(.v5)]),

        // Child processes for the tests that run real ones: posix_spawn with close-on-exec pipes, nothing else
        // inherited, no signal blocked, and a deadline on every wait (Tests/GroupSyncTestSupport/ChildProcess.swift
        // says why not Foundation's Process). C only for two glibc functions Swift's Glibc module leaves out.
        .target(name: "CChildSpawn", path: "Tests/CChildSpawn"),
        .target(name: "GroupSyncTestSupport", dependencies: ["CChildSpawn"], path: "Tests/GroupSyncTestSupport"),
        .testTarget(name: "GroupSyncTestSupportTests", dependencies: ["GroupSyncTestSupport"]),

        .testTarget(name: "GroupSyncCoreTests", dependencies: ["GroupSyncCore"]),
        .testTarget(name: "GroupSyncStoreTests", dependencies: ["GroupSyncStore", "CSQLite", "GroupSyncTestSupport"]),
        .testTarget(name: "GroupSyncTransportTests", dependencies: ["GroupSyncTransport", "GroupSyncTestSupport"]),
        // The daemon's pure policies, without sockets (the daemon itself is tested as a process, below).
        .testTarget(name: "GroupSyncDaemonTests", dependencies: ["GroupSyncDaemon"]),
        // Drives a LibnotifyNotifier from stdin, so tests can put it on a private session bus of its own.
        .executableTarget(name: "notify-probe", dependencies: ["GroupSyncNotify"], path: "Tests/NotifyProbe"),
        // Needs dbus-run-session and /usr/bin/python3 with python3-dbus and python3-gi; skips without them.
        .testTarget(name: "GroupSyncNotifyTests", dependencies: ["GroupSyncNotify", "notify-probe", "GroupSyncTestSupport"],
                    exclude: ["Fixtures"]),
        // Runs the real `groupsync` binary in temporary homes.
        .testTarget(name: "GroupSyncCLITests", dependencies: ["groupsync", "GroupSyncCore", "GroupSyncDaemon", "GroupSyncStore", "GroupSyncTransport",
                                                            "GroupSyncTestSupport"]),
    ]
)

// Fuzzing (`make fuzz`): libFuzzer supplies `main`, so these targets break a plain `swift build`; they join
// the package only when GROUPSYNC_FUZZ is set, and are built with `--sanitize=fuzzer` into their own
// scratch path.
if Context.environment["GROUPSYNC_FUZZ"] != nil {
    for name in ["FuzzFrames", "FuzzMessages", "FuzzValues"] {
        package.targets.append(.executableTarget(name: name, dependencies: ["GroupSyncCore"], path: "Fuzz/\(name)",
                                                 swiftSettings: [.unsafeFlags(["-parse-as-library"])]))
    }
}
