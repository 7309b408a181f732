import Glibc

/// Process-wide set-up the transport depends on.
public enum Transport {
    /// Ignores SIGPIPE for the whole process. Without this, writing to a socket the peer has already closed
    /// kills the process with no message, instead of returning EPIPE that the transport turns into an error.
    /// OpenSSL writes through plain `write()`, so the per-call MSG_NOSIGNAL flag is not an option.
    /// Safe to call any number of times from any thread; `TLSContext` calls it for you.
    public static func ignoreSIGPIPE() {
        _ = sigpipeIgnored
    }

    private static let sigpipeIgnored: Bool = {
        signal(SIGPIPE, SIG_IGN)
        return true
    }()
}
