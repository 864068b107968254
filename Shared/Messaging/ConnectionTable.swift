import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The TCP connections a server's socket has taken, by file number, as its monitor reports them and its requests show
/// them: when each came, when it last brought a whole request, and which client (its ZeroMQ identity) speaks on it.
///
/// A connection is known from its accepted event until its disconnected event. One the server shuts (`markShut`) stays
/// known as shut until then: requests ZeroMQ still hands over from it are dropped unanswered (its client is gone; its
/// replies would be made for nobody), and it is shut once.
struct ConnectionTable {
    struct Entry: Equatable {
        /// When the connection was taken.
        let since: ContinuousClock.Instant
        /// When it last brought a whole request (`nil`: never).
        var lastRequest: ContinuousClock.Instant?
        /// The client whose requests came on it.
        var identity: Data?
        /// Whether the server shut it (its disconnected event has not come yet).
        var shut = false
        /// The bytes its peer had acknowledged when last looked at, and when (`readingRate`).
        var acknowledged: Acknowledged?
    }

    /// A count of bytes the peer had acknowledged, and when it was read.
    struct Acknowledged: Equatable {
        let bytes: UInt64
        let at: ContinuousClock.Instant
    }

    private(set) var entries: [Int32: Entry] = [:]
    private var descriptorsByIdentity: [Data: Int32] = [:]

    /// A connection taken on file `descriptor` (one taken earlier under that number is gone).
    mutating func accepted(_ descriptor: Int32, at now: ContinuousClock.Instant) {
        remove(descriptor)
        entries[descriptor] = Entry(since: now, lastRequest: nil, identity: nil)
    }

    /// The connection on `descriptor` closed.
    mutating func disconnected(_ descriptor: Int32) {
        remove(descriptor)
    }

    /// A whole request from `identity` came on `descriptor`: false when the server shut that connection (the request is
    /// dropped); nothing is noted for a connection not known (not reported yet, or not a TCP endpoint's).
    mutating func request(from identity: Data, on descriptor: Int32, at now: ContinuousClock.Instant) -> Bool {
        guard var entry = entries[descriptor] else { return true }
        guard !entry.shut else { return false }
        entry.lastRequest = now
        if entry.identity != identity {
            if let earlier = entry.identity { descriptorsByIdentity[earlier] = nil }
            // A client is on one connection at a time: a connection that had its identity before is not its any more.
            if let other = descriptorsByIdentity[identity] { entries[other]?.identity = nil }
            entry.identity = identity
            descriptorsByIdentity[identity] = descriptor
        }
        entries[descriptor] = entry
        return true
    }

    /// The connection `identity`'s requests came on last, if it is known and not shut.
    func descriptor(of identity: Data) -> Int32? {
        descriptorsByIdentity[identity].flatMap { entries[$0]?.shut == false ? $0 : nil }
    }

    /// Whether `identity`'s connection was shut by the server (and has not closed yet).
    func isShut(_ identity: Data) -> Bool {
        descriptorsByIdentity[identity].flatMap { entries[$0]?.shut } ?? false
    }

    /// The connections that brought no whole request in the `quiet` before `now` (counted from when they came, for one
    /// that never brought any).
    func quiet(for quiet: Duration, at now: ContinuousClock.Instant) -> [Int32] {
        entries.compactMap { descriptor, entry in !entry.shut && now - (entry.lastRequest ?? entry.since) >= quiet ? descriptor : nil }
    }

    /// How many bytes a second the peer on `descriptor` acknowledged since the last look, given it has `bytes`
    /// acknowledged at `now`; `nil` at the first look (or for a connection not known).
    mutating func readingRate(_ descriptor: Int32, acknowledged bytes: UInt64, at now: ContinuousClock.Instant) -> Double? {
        guard var entry = entries[descriptor] else { return nil }
        defer {
            entry.acknowledged = Acknowledged(bytes: bytes, at: now)
            entries[descriptor] = entry
        }
        guard let earlier = entry.acknowledged, now > earlier.at else { return nil }
        return Double(bytes &- earlier.bytes) / ((now - earlier.at) / .seconds(1))
    }

    /// Forgets what the peer on `descriptor` had acknowledged: the next `readingRate` starts a new stretch.
    mutating func forgetReadingRate(_ descriptor: Int32) {
        entries[descriptor]?.acknowledged = nil
    }

    /// Notes that the server shuts the connection on `descriptor`; false when it was not known or shut already.
    @discardableResult
    mutating func markShut(_ descriptor: Int32) -> Bool {
        guard entries[descriptor]?.shut == false else { return false }
        entries[descriptor]?.shut = true
        return true
    }

    private mutating func remove(_ descriptor: Int32) {
        guard let entry = entries.removeValue(forKey: descriptor) else { return }
        if let identity = entry.identity, descriptorsByIdentity[identity] == descriptor { descriptorsByIdentity[identity] = nil }
    }

    /// How many clients are known by their identity (at most one a connection).
    var identified: Int { descriptorsByIdentity.count }
}

extension ConnectionTable {
    /// The bytes the peer of TCP connection `descriptor` has acknowledged so far (`tcpi_bytes_acked`, Linux 4.1 and
    /// later): it grows while the client reads what is sent, and stands still while it does not. `nil` when the
    /// system does not say.
    static func bytesAcknowledged(_ descriptor: Int32) -> UInt64? {
        // `struct tcp_info` as the kernel has it: Glibc's copy ends before this field, which is at byte 120.
        tcpInfoCounter(descriptor, at: 120)
    }

    /// The bytes received on TCP connection `descriptor` so far (`tcpi_bytes_received`, Linux 4.1 and later, byte 128
    /// of `struct tcp_info`); `nil` when it is not a TCP connection or the system does not say.
    static func bytesReceived(_ descriptor: Int32) -> UInt64? {
        tcpInfoCounter(descriptor, at: 128)
    }

    /// The 64-bit counter at byte `offset` of the kernel's `struct tcp_info` for `descriptor`.
    private static func tcpInfoCounter(_ descriptor: Int32, at offset: Int) -> UInt64? {
        var info = [UInt8](repeating: 0, count: 256)
        var length = socklen_t(info.count)
        guard getsockopt(descriptor, Int32(IPPROTO_TCP), Int32(TCP_INFO), &info, &length) == 0, Int(length) >= offset + 8 else { return nil }
        return info.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }
    }

    /// Whether the system's buffer for sending on `descriptor` has room: false while it is full, the client reading
    /// nothing (or too slowly to have taken any since).
    static func hasRoomToSend(_ descriptor: Int32) -> Bool {
        var item = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        return poll(&item, 1, 0) == 1 && item.revents & Int16(POLLOUT) != 0
    }
}
