import Foundation

/// Remembers write requests by id, so a request retried after a lost reply is
/// answered again without running twice.
///
/// Bounded by entry count and age; owned by the server's I/O thread.
struct ReplyCache {
    /// Where a reply goes: the ROUTER identity, and whether the client used a REQ-style empty delimiter.
    struct Peer: Equatable {
        var identity: Data
        var delimited: Bool
    }

    enum Lookup: Equatable {
        /// First time this id is seen; it is now recorded as running.
        case new
        /// Still running; the reply will go to the newest peer.
        case running
        /// Already answered: here is the same reply again.
        case answered([Data])
        /// The id was used before for another operation.
        case reused(previousOp: String)
    }

    private enum State {
        case running(Peer)
        case answered([Data])
    }

    private struct Entry {
        var op: String
        var state: State
        var expires: ContinuousClock.Instant
    }

    let capacity: Int
    let lifetime: Duration
    private var entries: [String: Entry] = [:]
    private var order: [String] = []
    private var head = 0

    init(capacity: Int, lifetime: Duration) {
        self.capacity = max(1, capacity)
        self.lifetime = lifetime
    }

    var count: Int { entries.count }

    /// Looks `id` up; records it as running for `peer` when it is new.
    mutating func begin(id: String, op: String, peer: Peer, now: ContinuousClock.Instant) -> Lookup {
        evict(now: now)
        if var entry = entries[id] {
            guard entry.op == op else { return .reused(previousOp: entry.op) }
            switch entry.state {
            case .answered(let frames):
                return .answered(frames)
            case .running:
                entry.state = .running(peer)
                entries[id] = entry
                return .running
            }
        }
        entries[id] = Entry(op: op, state: .running(peer), expires: now + lifetime)
        order.append(id)
        return .new
    }

    /// Records the reply for `id`; returns the newest peer waiting for it, if still known.
    mutating func finish(id: String, reply: [Data], now: ContinuousClock.Instant) -> Peer? {
        guard var entry = entries[id] else { return nil }
        guard case .running(let peer) = entry.state else { return nil }
        entry.state = .answered(reply)
        entry.expires = now + lifetime
        entries[id] = entry
        return peer
    }

    private mutating func evict(now: ContinuousClock.Instant) {
        while head < order.count {
            let id = order[head]
            guard let entry = entries[id] else {
                head += 1
                continue
            }
            let expired = entry.expires <= now
            guard expired || entries.count > capacity else { break }
            if case .running = entry.state, !expired { break }
            entries[id] = nil
            head += 1
        }
        if head > 1_024 && head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
