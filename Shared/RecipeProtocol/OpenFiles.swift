import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files a service process may hold open: the limit (raised at start), how many are open, what a service needs
/// to start, and the answer to a request that needed one more. Raising it with a line in the service's log is
/// `OpenFiles.raise(logger:serviceName:minimum:)`, in Messaging.
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
        var count = 0
        guard eachDescriptor({ _ in count += 1 }) else {
            return isExhaustion(errno: errno) ? limit.map { Int(min($0, UInt64(Int32.max))) } : nil
        }
        return count
    }

    /// The process's open descriptors (Linux: the entries of /proc/self/fd, less the listing's own), or nil when the
    /// listing cannot be opened (`errno` says why).
    public static func descriptors() -> [Int32]? {
        var found: [Int32] = []
        return eachDescriptor { found.append($0) } ? found : nil
    }

    /// Calls `body` with each open descriptor (the entries of /proc/self/fd, less the listing's own); false when the
    /// listing cannot be opened (`errno` says why).
    ///
    /// Each entry's name is read where it lies, never by loading the whole `dirent`: the system's entries are as
    /// long as their names, and a `dirent` loaded whole (`entry.pointee`) reads up to 256 bytes past a short one —
    /// past the end of the listing's buffer when the entry is its last, which ended a debug build's process.
    private static func eachDescriptor(_ body: (Int32) -> Void) -> Bool {
        guard let listing = opendir("/proc/self/fd") else { return false }
        let own = dirfd(listing)
        defer { closedir(listing) }
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        while let entry = readdir(listing) {
            let name = UnsafeRawPointer(entry).advanced(by: nameOffset).assumingMemoryBound(to: CChar.self)
            if let descriptor = Int32(String(cString: name)), descriptor != own { body(descriptor) }
        }
        return true
    }

    /// Whether `code` is the system's "no file descriptor left" (the process's or the whole system's).
    public static func isExhaustion(errno code: Int32) -> Bool { code == EMFILE || code == ENFILE }

    /// The soft limit is never raised past this: a million descriptors is far beyond what the services use.
    public static let ceiling: UInt64 = 1 << 20

    /// Raises the soft limit to the hard one (at most `ceiling`); returns the limit before and after, or nil when it
    /// could not be read. Every client connection takes a descriptor, and so do the database, its readers and each
    /// photo being read or written: the usual soft limit (1,024; 64 where an administrator set it low) lets a stranger
    /// who opens that many connections keep every other client out. Raising it to the hard one needs no privilege.
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

    /// What a service holds open before its first client: about 35 for either (measured: the ZeroMQ context, sockets
    /// and wake-up pipes, the database and a reader, the log's standard streams), and room for a few connections.
    public static let serviceMinimum: UInt64 = 64

    /// The worker's minimum on this machine: SwiftNIO, which fetches pages, keeps three descriptors for each
    /// processor (a thread each).
    public static var workerMinimum: UInt64 {
        serviceMinimum + 3 * UInt64(max(1, ProcessInfo.processInfo.activeProcessorCount))
    }

    /// A service's open-file limit is below what it needs to start.
    public struct LimitTooLow: Error, CustomStringConvertible {
        public let serviceName: String
        public let limit: UInt64
        public let minimum: UInt64

        public init(serviceName: String, limit: UInt64, minimum: UInt64) {
            self.serviceName = serviceName
            self.limit = limit
            self.minimum = minimum
        }

        public var description: String {
            "\(serviceName) cannot start: it may open at most \(limit) files (its open-file limit, raised as far as the hard limit allows) and needs at least \(minimum) (what it holds open before its first client, and a few client connections). Raise the limit where it is started: ulimit -n 4096 in its shell, LimitNOFILE= in a systemd unit, --ulimit nofile= for docker (ulimits: in docker-compose.yml)"
        }
    }

    /// `RLIMIT_NOFILE` as `getrlimit` and `setrlimit` take it here.
    #if canImport(Glibc)
    public static let resourceNumber = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    public static let resourceNumber = RLIMIT_NOFILE
    #endif
}
