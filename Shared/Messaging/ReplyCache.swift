import Foundation

/// Remembers write requests by client and id, so a request retried after a lost
/// reply is answered again without running twice.
///
/// An entry is keyed on (client, request id) — the client being its CURVE key when
/// the service has keys — and remembers a digest of the request: the same id with
/// another body is refused, never answered with another request's reply. Bounded by
/// entry count, reply bytes and age; owned by the server's I/O thread.
struct ReplyCache {
    /// Where a reply goes: the ROUTER identity, whether the client used a REQ-style
    /// empty delimiter, and who the client is (its CURVE key; empty without CURVE).
    struct Peer: Equatable {
        var identity: Data
        var delimited: Bool
        var principal: String = ""
    }

    enum Lookup: Equatable {
        /// First time this id is seen; it is now recorded as running.
        case new
        /// Still running; its reply goes to this peer too, as to every other that asked meanwhile.
        case running
        /// Still running, and `waitersPerRequest` clients wait for it already: this one is not added.
        case crowded
        /// Already answered: here is the same reply again.
        case answered([Data])
        /// The id was used before, by this client, for another operation or another body.
        case reused(previousOp: String, sameOp: Bool)
    }

    private enum State {
        /// Everyone waiting for the reply, oldest first, each client once.
        case running([Peer])
        case answered([Data], bytes: Int)
    }

    /// How many clients may wait for one running request. Without CURVE every client is the same principal, so the
    /// reply of a request went to whoever sent the same id and body last — the client that sent it first waited
    /// for good (four clients replaying the same seeds lost one in a loaded run); now it goes to each of them.
    static let waitersPerRequest = 16

    private struct Entry {
        var op: String
        var digest: Data
        var state: State
        var expires: ContinuousClock.Instant
    }

    private struct Key: Hashable {
        var principal: String
        var id: String
    }

    let capacity: Int
    let maxBytes: Int
    let lifetime: Duration
    private var entries: [Key: Entry] = [:]
    private var order: [Key] = []
    private var head = 0
    /// Bytes of every remembered reply.
    private(set) var bytes = 0

    init(capacity: Int, maxBytes: Int = .max, lifetime: Duration) {
        self.capacity = max(1, capacity)
        self.maxBytes = max(0, maxBytes)
        self.lifetime = lifetime
    }

    var count: Int { entries.count }

    /// Looks `id` up for `peer`'s client; records it as running when it is new.
    /// `digest` stands for the request's content (body and frames).
    mutating func begin(id: String, op: String, digest: Data, peer: Peer, now: ContinuousClock.Instant) -> Lookup {
        evict(now: now)
        let key = Key(principal: peer.principal, id: id)
        if var entry = entries[key] {
            guard entry.op == op, entry.digest == digest else { return .reused(previousOp: entry.op, sameOp: entry.op == op) }
            switch entry.state {
            case .answered(let frames, _):
                return .answered(frames)
            case .running(var peers):
                if let index = peers.firstIndex(where: { $0.identity == peer.identity }) {
                    peers[index] = peer
                } else {
                    guard peers.count < Self.waitersPerRequest else { return .crowded }
                    peers.append(peer)
                }
                entry.state = .running(peers)
                entries[key] = entry
                return .running
            }
        }
        entries[key] = Entry(op: op, digest: digest, state: .running([peer]), expires: now + lifetime)
        order.append(key)
        return .new
    }

    /// Records the reply for `id` of `principal` (or, when not `remember`, forgets `id`: a retry runs again); returns
    /// the peers waiting for it, oldest first (none when it is not known as running).
    mutating func finish(id: String, principal: String, reply: [Data], remember: Bool = true, now: ContinuousClock.Instant) -> [Peer] {
        let key = Key(principal: principal, id: id)
        guard var entry = entries[key], case .running(let peers) = entry.state else { return [] }
        let size = reply.reduce(0) { $0 + $1.count }
        if !remember || size > maxBytes {
            // Not to be given again (a `busy` that did nothing), or too large to remember at all: a retry runs again
            // (writes are idempotent by their ids).
            entries[key] = nil
            return peers
        }
        entry.state = .answered(reply, bytes: size)
        entry.expires = now + lifetime
        entries[key] = entry
        bytes += size
        evict(now: now)
        return peers
    }

    /// Drops expired entries, then the oldest answered ones while over the count or byte bound.
    /// Running entries are never dropped before they expire (their reply is still to come).
    private mutating func evict(now: ContinuousClock.Instant) {
        var skipped: [Key] = []
        while head < order.count {
            let key = order[head]
            guard let entry = entries[key] else {
                head += 1
                continue
            }
            let expired = entry.expires <= now
            guard expired || entries.count > capacity || bytes > maxBytes else { break }
            head += 1
            if case .running = entry.state, !expired {
                skipped.append(key) // still wanted: it goes back in line
                continue
            }
            if case .answered(_, let size) = entry.state { bytes -= size }
            entries[key] = nil
        }
        order.append(contentsOf: skipped)
        if head > 1_024 && head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
