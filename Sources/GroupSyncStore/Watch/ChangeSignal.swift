import Glibc

/// Cross-process "something changed" signal: after a commit, a writer opens and closes the home's
/// `changes` file for writing, which inotify reports as IN_CLOSE_WRITE to every watcher. Nothing is
/// written; the store itself is the message. This keeps watchers event-driven (no polling) and cheap.
public enum ChangeSignal {
    public static func post(home: Home) {
        let fd = open(home.changeSignalPath, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd >= 0 { close(fd) }
    }
}
