import Logging
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The number of files a service may hold open: its soft limit, raised at start to the hard one.
///
/// Every client connection takes a descriptor, and so do the database, its readers and each photo being read or
/// written. The usual soft limit (1,024; 64 where an administrator set it low) lets a stranger who opens that many
/// connections keep every other client out, and makes writes fail for want of a descriptor. The hard limit is what the
/// system allows the process (often 524,288); raising the soft limit to it needs no privilege. Services call this
/// once, before they bind.
public enum OpenFileLimit {
    /// The soft limit is never raised past this: a million descriptors is far beyond what the services use.
    public static let ceiling: UInt64 = 1 << 20

    /// Raises the soft limit to the hard one (at most `ceiling`); returns the limit before and after, or nil when it
    /// could not be read.
    @discardableResult
    public static func raise() -> (before: UInt64, after: UInt64)? {
        var limit = rlimit()
        guard getrlimit(resourceNumber, &limit) == 0 else { return nil }
        let before = UInt64(limit.rlim_cur)
        let target = min(UInt64(limit.rlim_max), ceiling)
        guard target > before else { return (before, before) }
        limit.rlim_cur = rlim_t(target)
        guard setrlimit(resourceNumber, &limit) == 0 else { return (before, before) }
        return (before, target)
    }

    /// Raises the limit and says so in the log when it changed (or when it stays low).
    public static func raise(logger: Logger) {
        guard let (before, after) = raise() else { return }
        if after > before {
            logger.info("open file limit raised", metadata: ["from": "\(before)", "to": "\(after)"])
        }
        if after < 1_024 {
            logger.warning("the open file limit is low: each client connection takes a file, so a few hundred connections keep every other client out; raise the hard limit (ulimit -Hn, LimitNOFILE=, docker --ulimit nofile=)",
                           metadata: ["limit": "\(after)"])
        }
    }

    #if canImport(Glibc)
    private static let resourceNumber = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resourceNumber = RLIMIT_NOFILE
    #endif
}
