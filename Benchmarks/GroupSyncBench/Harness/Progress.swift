import Glibc

/// Progress lines on stderr, so stdout carries only the final table.
enum Progress {
    static func say(_ text: String) {
        let line = "[bench] " + text + "\n"
        _ = line.withCString { fputs($0, stderr) }
    }
}
