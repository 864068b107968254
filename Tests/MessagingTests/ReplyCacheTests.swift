import Foundation
import Testing
@testable import Messaging

@Suite("Remembered writes: a running write's reply goes to every client that sent it, a finished one is given again")
struct ReplyCacheTests {
    let now = ContinuousClock.now
    let digest = Data("body".utf8)

    func peer(_ byte: UInt8, principal: String = "") -> ReplyCache.Peer {
        ReplyCache.Peer(identity: Data([byte]), delimited: true, principal: principal)
    }

    @Test("clients sending the same write while it runs all wait for it, each once, oldest first; afterwards it is answered again")
    func waiters() {
        var cache = ReplyCache(capacity: 10, lifetime: .seconds(60))
        #expect(cache.begin(id: "w", op: "op", digest: digest, peer: peer(1), now: now) == .new)
        #expect(cache.begin(id: "w", op: "op", digest: digest, peer: peer(2), now: now) == .running)
        #expect(cache.begin(id: "w", op: "op", digest: digest, peer: peer(1), now: now) == .running, "the first again: still once")
        #expect(cache.begin(id: "w", op: "op", digest: Data("other".utf8), peer: peer(3), now: now) == .reused(previousOp: "op", sameOp: true))
        let reply = [Data("ok".utf8)]
        #expect(cache.finish(id: "w", principal: "", reply: reply, now: now) == [peer(1), peer(2)])
        #expect(cache.begin(id: "w", op: "op", digest: digest, peer: peer(4), now: now) == .answered(reply))
        #expect(cache.finish(id: "w", principal: "", reply: reply, now: now).isEmpty, "finished already: nobody waits")
    }

    @Test("at most waitersPerRequest clients wait for one write; the next is told it is crowded, and other principals' ids are their own")
    func crowded() {
        var cache = ReplyCache(capacity: 10, lifetime: .seconds(60))
        for byte in 0..<UInt8(ReplyCache.waitersPerRequest) {
            #expect(cache.begin(id: "w", op: "op", digest: digest, peer: peer(byte), now: now) == (byte == 0 ? .new : .running))
        }
        #expect(cache.begin(id: "w", op: "op", digest: digest, peer: peer(200), now: now) == .crowded)
        #expect(cache.begin(id: "w", op: "op", digest: digest, peer: peer(200, principal: "key"), now: now) == .new, "another client key: its own id")
        #expect(cache.finish(id: "w", principal: "", reply: [], now: now).count == ReplyCache.waitersPerRequest)
    }

    @Test("a reply not to be remembered goes to every waiter and the id is forgotten: a retry runs again")
    func notRemembered() {
        var cache = ReplyCache(capacity: 10, lifetime: .seconds(60))
        _ = cache.begin(id: "w", op: "op", digest: digest, peer: peer(1), now: now)
        _ = cache.begin(id: "w", op: "op", digest: digest, peer: peer(2), now: now)
        #expect(cache.finish(id: "w", principal: "", reply: [Data("busy".utf8)], remember: false, now: now) == [peer(1), peer(2)])
        #expect(cache.begin(id: "w", op: "op", digest: digest, peer: peer(1), now: now) == .new)
    }
}
