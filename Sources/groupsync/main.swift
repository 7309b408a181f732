import GroupSyncCLI
import Glibc

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
