#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files a service process may hold open, and the answer to a request that needed one more.
public enum OpenFiles {
    /// The process's limit on open files (the soft one, which the services raise to the hard one at start), when it
    /// can be read.
    public static var limit: UInt64? {
        var limit = rlimit()
        guard getrlimit(resourceNumber, &limit) == 0 else { return nil }
        return UInt64(limit.rlim_cur)
    }

    /// `busy`: `what` needed a file and `service` holds every one it may. Passing: most are client connections, and a
    /// closed connection gives its file back; the reference client retries `busy`. `kept` says what became of the
    /// request ("nothing of it was kept").
    public static func allInUse(_ what: String, service: String, kept: String) -> ServiceError {
        ServiceError(.busy,
            "\(what): \(service) has every file it may open in use (\(limit.map { "its limit is \($0); " } ?? "")each client connection takes one); \(kept). Retry in a moment; if this goes on, raise \(service)'s open-file limit (ulimit -n, systemd's LimitNOFILE=, docker's --ulimit nofile=)")
    }

    /// How many files the process holds open (Linux: the entries of /proc/self/fd, less the listing's own); the limit
    /// when not even the listing can be opened for want of a file; nil when there is no /proc to read.
    public static func openCount() -> Int? {
        guard let listing = opendir("/proc/self/fd") else {
            return isExhaustion(errno: errno) ? limit.map { Int(min($0, UInt64(Int32.max))) } : nil
        }
        defer { closedir(listing) }
        var open = 0
        while let entry = readdir(listing) {
            if entry.pointee.d_name.0 != UInt8(ascii: ".") { open += 1 }
        }
        return max(0, open - 1)
    }

    /// Whether `code` is the system's "no file descriptor left" (the process's or the whole system's).
    public static func isExhaustion(errno code: Int32) -> Bool { code == EMFILE || code == ENFILE }

    /// `RLIMIT_NOFILE` as `getrlimit` and `setrlimit` take it here.
    #if canImport(Glibc)
    public static let resourceNumber = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    public static let resourceNumber = RLIMIT_NOFILE
    #endif
}
