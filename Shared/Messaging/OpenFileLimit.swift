import Foundation
import Logging
import RecipeProtocol
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
        guard getrlimit(OpenFiles.resourceNumber, &limit) == 0 else { return nil }
        let before = UInt64(limit.rlim_cur)
        let target = min(UInt64(limit.rlim_max), ceiling)
        guard target > before else { return (before, before) }
        limit.rlim_cur = rlim_t(target)
        guard setrlimit(OpenFiles.resourceNumber, &limit) == 0 else { return (before, before) }
        return (before, target)
    }

    /// Raises the limit and says so in the log when it changed (or when it stays low). Throws `OpenFileLimitError`
    /// when even the raised limit is under `minimum`: a service started so had its start fail at whichever part
    /// first wanted a descriptor, in that part's words ("cannot open the data folder", "zmq_ctx_new"), or stopped at
    /// once inside ZeroMQ or SwiftNIO, which end the process when they cannot make their pollers.
    public static func raise(logger: Logger, serviceName: String, minimum: UInt64) throws {
        guard let (before, after) = raise() else { return }
        if after > before {
            logger.info("open file limit raised", metadata: ["from": "\(before)", "to": "\(after)"])
        }
        if after < minimum {
            throw OpenFileLimitError(serviceName: serviceName, limit: after, minimum: minimum)
        }
        if after < 1_024 {
            logger.warning("the open file limit is low: each client connection takes a file, so a few hundred connections keep every other client out; raise the hard limit (ulimit -Hn, LimitNOFILE=, docker --ulimit nofile=)",
                           metadata: ["limit": "\(after)"])
        }
    }

    /// What a service holds open before its first client: about 35 for either (measured: the ZeroMQ context, sockets
    /// and wake-up pipes, the database and a reader, the log's standard streams), and room for a few connections.
    public static let serviceMinimum: UInt64 = 64

    /// The worker's minimum on this machine: SwiftNIO, which fetches pages, keeps three descriptors for each
    /// processor (a thread each).
    public static var workerMinimum: UInt64 {
        serviceMinimum + 3 * UInt64(max(1, ProcessInfo.processInfo.activeProcessorCount))
    }
}

/// A service's open-file limit is below what it needs to start.
public struct OpenFileLimitError: Error, CustomStringConvertible {
    public let serviceName: String
    public let limit: UInt64
    public let minimum: UInt64

    public var description: String {
        "\(serviceName) cannot start: it may open at most \(limit) files (its open-file limit, raised as far as the hard limit allows) and needs at least \(minimum) (what it holds open before its first client, and a few client connections). Raise the limit where it is started: ulimit -n 4096 in its shell, LimitNOFILE= in a systemd unit, --ulimit nofile= for docker (ulimits: in docker-compose.yml)"
    }
}
