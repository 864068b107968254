import Foundation
import ZeroMQ

/// Replies a server could not hand to ZeroMQ yet because their client's queue was full (`ServerLoop.replyQueue`), held
/// in order per client while its connection still takes bytes: a client that reads, whose replies were made faster than
/// ZeroMQ's I/O thread sent them (a burst of quick refusals while it reads large frames on other connections). Bounded
/// per client, by count and bytes, so what a client that does not read can make the server hold stays small; and each
/// client's wait is timed from when it last showed it reads (a reply sent, or more bytes of its connection taken), so
/// one that stopped reading can be told from one that reads slowly.
struct ReplyBacklog {
    /// The most replies held for one client.
    static let maxReplies = 32
    /// The most bytes of replies held for one client; its first reply is always held, whatever its size. (How many a
    /// client may have held is bounded first by its requests at once, `ServerLoop.requestsPerClient`, which counts
    /// them.)
    static let maxBytes = 64 * 1_024 * 1_024

    private var waiting: [Data: [Message]] = [:]
    private var bytes: [Data: Int] = [:]
    private var progress: [Data: ContinuousClock.Instant] = [:]
    private var acknowledged: [Data: UInt64] = [:]
    private var retries: [Data: (at: ContinuousClock.Instant, delay: Duration)] = [:]
    /// How soon a client's held replies are tried again after a try found its queue full, the first time; each miss
    /// in a row doubles it, up to `lastRetry`: a thousand clients reading a byte a second cost the loop a few
    /// thousand looks a second, not hundreds of thousands.
    static let firstRetry = Duration.milliseconds(5)
    static let lastRetry = Duration.milliseconds(100)
    /// The clients with replies held, in the order their first came (they are sent in that order).
    private(set) var clients: [Data] = []

    var isEmpty: Bool { clients.isEmpty }

    /// Whether replies are held for `identity` (a new one goes behind them).
    func holds(_ identity: Data) -> Bool { waiting[identity] != nil }

    /// Whether `identity`'s held replies are due to be tried again at `now`.
    func isDue(_ identity: Data, at now: ContinuousClock.Instant) -> Bool {
        retries[identity].map { now >= $0.at } ?? false
    }

    /// A try at `now` found `identity`'s queue still full: the next comes later than the last did.
    mutating func missed(_ identity: Data, at now: ContinuousClock.Instant) {
        guard let retry = retries[identity] else { return }
        let delay = min(retry.delay * 2, Self.lastRetry)
        retries[identity] = (now + delay, delay)
    }

    /// When the next try of any client's held replies is due.
    var nextDue: ContinuousClock.Instant? { retries.values.map(\.at).min() }

    /// How many replies are held for `identity`.
    func count(for identity: Data) -> Int { waiting[identity]?.count ?? 0 }

    /// Holds `message` for `identity` behind those held already; false, holding nothing, when it would pass the bounds.
    mutating func hold(_ message: Message, for identity: Data, at now: ContinuousClock.Instant) -> Bool {
        let size = message.frames.reduce(0) { $0 + $1.count }
        let held = waiting[identity, default: []]
        guard held.count < Self.maxReplies, held.isEmpty || bytes[identity, default: 0] + size <= Self.maxBytes else { return false }
        if held.isEmpty {
            clients.append(identity)
            progress[identity] = now
            retries[identity] = (now + Self.firstRetry, Self.firstRetry)
        }
        waiting[identity, default: []].append(message)
        bytes[identity, default: 0] += size
        return true
    }

    /// The oldest reply held for `identity`.
    func first(for identity: Data) -> Message? { waiting[identity]?.first }

    /// Since when `identity`'s replies have been held with no sign that it reads: since its first was held, the last
    /// was sent, or its connection last took more bytes (`noteAcknowledged`).
    func stalled(_ identity: Data) -> ContinuousClock.Instant? { progress[identity] }

    /// Notes how many bytes `identity`'s connection has had acknowledged (`nil`: not known); more than when last noted
    /// is a sign it reads, at `now`.
    mutating func noteAcknowledged(_ bytes: UInt64?, for identity: Data, at now: ContinuousClock.Instant) {
        guard waiting[identity] != nil, let bytes else { return }
        if let earlier = acknowledged[identity], bytes != earlier { progress[identity] = now }
        acknowledged[identity] = bytes
    }

    /// Lets go of the oldest reply held for `identity`: it was sent, at `now`.
    mutating func removeFirst(for identity: Data, at now: ContinuousClock.Instant) {
        guard var held = waiting[identity], !held.isEmpty else { return }
        let sent = held.removeFirst()
        if held.isEmpty {
            drop(identity)
        } else {
            waiting[identity] = held
            bytes[identity, default: 0] -= sent.frames.reduce(0) { $0 + $1.count }
            progress[identity] = now
            retries[identity] = (now + Self.firstRetry, Self.firstRetry)
        }
    }

    /// Lets go of every reply held for `identity` (the client is gone, or was shut); how many there were.
    @discardableResult
    mutating func drop(_ identity: Data) -> Int {
        guard let held = waiting.removeValue(forKey: identity) else { return 0 }
        bytes[identity] = nil
        progress[identity] = nil
        acknowledged[identity] = nil
        retries[identity] = nil
        clients.removeAll { $0 == identity }
        return held.count
    }
}
