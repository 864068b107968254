import Foundation
import ZeroMQ

/// Replies a server could not hand to ZeroMQ yet because their client's queue was full (`ServerLoop.replyQueue`), held
/// in order per client while its connection still takes bytes: a client that reads, whose replies were made faster than
/// ZeroMQ's I/O thread sent them (a burst of quick refusals while it reads large frames on other connections). Bounded
/// per client, by count and bytes, so what a client that does not read can make the server hold stays small; and each
/// client's wait is timed from its last reply sent, so one whose replies stopped leaving can be told from one that reads.
struct ReplyBacklog {
    /// The most replies held for one client.
    static let maxReplies = 32
    /// The most bytes of replies held for one client; its first reply is always held, whatever its size.
    static let maxBytes = 8 * 1_024 * 1_024

    private var waiting: [Data: [Message]] = [:]
    private var bytes: [Data: Int] = [:]
    private var progress: [Data: ContinuousClock.Instant] = [:]
    /// The clients with replies held, in the order their first came (they are sent in that order).
    private(set) var clients: [Data] = []

    var isEmpty: Bool { clients.isEmpty }

    /// Whether replies are held for `identity` (a new one goes behind them).
    func holds(_ identity: Data) -> Bool { waiting[identity] != nil }

    /// Holds `message` for `identity` behind those held already; false, holding nothing, when it would pass the bounds.
    mutating func hold(_ message: Message, for identity: Data, at now: ContinuousClock.Instant) -> Bool {
        let size = message.frames.reduce(0) { $0 + $1.count }
        let held = waiting[identity, default: []]
        guard held.count < Self.maxReplies, held.isEmpty || bytes[identity, default: 0] + size <= Self.maxBytes else { return false }
        if held.isEmpty {
            clients.append(identity)
            progress[identity] = now
        }
        waiting[identity, default: []].append(message)
        bytes[identity, default: 0] += size
        return true
    }

    /// The oldest reply held for `identity`.
    func first(for identity: Data) -> Message? { waiting[identity]?.first }

    /// Since when `identity`'s replies have been held with none of them sent: since its first was held, or since the
    /// last was sent.
    func stalled(_ identity: Data) -> ContinuousClock.Instant? { progress[identity] }

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
        }
    }

    /// Lets go of every reply held for `identity` (the client is gone, or was shut); how many there were.
    @discardableResult
    mutating func drop(_ identity: Data) -> Int {
        guard let held = waiting.removeValue(forKey: identity) else { return 0 }
        bytes[identity] = nil
        progress[identity] = nil
        clients.removeAll { $0 == identity }
        return held.count
    }
}
