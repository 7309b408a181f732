import GroupSyncCLI
import Glibc

// Descriptors 0–2 left closed by whoever started us (`status >&-`, `serve 2>&-`) would be taken by the next
// files opened, the store's writer lock among them, and what was meant for the terminal would be written
// into them (found by review: `serve 2>&-` appended its whole log to the lock file). /dev/null takes their
// places first.
for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) == -1 {
    _ = open("/dev/null", O_RDWR)
}

var environment: [String: String] = [:]
var cursor = environ
while let entry = cursor.pointee {
    let pair = String(cString: entry)
    if let equals = pair.firstIndex(of: "=") {
        environment[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
    }
    cursor += 1
}
// `CommandLine.arguments` repairs bytes that are not UTF-8 into U+FFFD, so two different byte strings would
// name the same suite or key. Refuse them instead (exit 2, bad usage, nothing done).
// (`stride`, not `1..<argc`: a process started with no arguments at all, as under some preloaded shims, must
// not trap here.)
for index in stride(from: 1, to: Int(CommandLine.argc), by: 1) {
    guard let raw = CommandLine.unsafeArgv[index], String(validatingCString: raw) == nil else { continue }
    let message = Array("groupsync: argument \(index) is not valid UTF-8\n".utf8)
    _ = write(2, message, message.count)
    exit(2)
}
exit(CommandLineTool.main(CommandLine.arguments, environment: environment))
