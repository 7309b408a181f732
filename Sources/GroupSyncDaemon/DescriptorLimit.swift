import Glibc

/// The daemon's file descriptors: up to `ControlServer.maxClients` control-socket clients, a connection and a
/// store per peer, the stores, the log and the change signals. A service often starts with a soft limit of
/// 1,024 (systemd's default), which the clients alone fill: only 993 of 1,024 were served in review. So the
/// soft limit is raised at start to what the daemon may use, within the hard limit, which stays the
/// administrator's to set.
enum DescriptorLimit {
    static let wanted: rlim_t = 8192

    /// Raises the soft limit towards `wanted`; returns the soft limit in force afterwards (nil if unknown).
    @discardableResult
    static func raise() -> rlim_t? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        let target = min(limit.rlim_max, wanted)
        guard limit.rlim_cur < target else { return limit.rlim_cur }
        var raised = limit
        raised.rlim_cur = target
        return setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) == 0 ? target : limit.rlim_cur
    }
}
