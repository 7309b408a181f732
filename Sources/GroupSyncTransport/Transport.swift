import COpenSSL
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

    /// Initializes OpenSSL without its exit handler; must come before any other OpenSSL call to count.
    ///
    /// By default OpenSSL frees its global state in an `atexit` handler. A daemon that returns from `serve`
    /// while connection threads are still ending their sessions (freeing their SSL objects) then has the two
    /// freeing the same state at once, which corrupted the heap at exit in a test run ("corrupted
    /// double-linked list" after `event=stopped`). The kernel reclaims everything at exit anyway.
    public static func initializeOpenSSLWithoutExitHandler() {
        _ = openSSLInitialized
    }

    private static let openSSLInitialized: Bool = {
        OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil) == 1
    }()

    private static let sigpipeIgnored: Bool = {
        signal(SIGPIPE, SIG_IGN)
        return true
    }()
}
