/// How a command fails, and the exit code each failure maps to. The codes are a public contract:
/// 0 done, 1 not found (a key, a peer, a notification), 2 bad usage or bad input, 3 the environment failed
/// (disk, damaged store), 4 a check found a failure (`simulate`: a seed did not converge).
enum CLIError: Error, CustomStringConvertible {
    case usage(String)
    case badInput(String)
    case notFound(String)
    case failure(String)
    case verificationFailed(String)

    var exitCode: Int32 {
        switch self {
        case .notFound: 1
        case .usage, .badInput: 2
        case .failure: 3
        case .verificationFailed: 4
        }
    }

    var description: String {
        switch self {
        case .usage(let m), .badInput(let m), .notFound(let m), .failure(let m), .verificationFailed(let m): m
        }
    }
}

enum ExitCode {
    static let success: Int32 = 0
}
