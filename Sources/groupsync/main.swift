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
exit(CommandLineTool.main(CommandLine.arguments, environment: environment))
