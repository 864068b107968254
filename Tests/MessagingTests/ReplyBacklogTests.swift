import Foundation
import Testing
import ZeroMQ
@testable import Messaging

@Suite("Replies held for a client whose queue is full")
struct ReplyBacklogTests {
    let start = ContinuousClock.now
    let alice = Data("alice".utf8)
    let bob = Data("bob".utf8)

    func reply(_ text: String, bytes: Int = 0) -> Message {
        Message([Data(text.utf8), Data(count: bytes)])
    }

    @Test("held in order per client, each client's wait timed from its last reply sent, forgotten once all are sent")
    func orderAndProgress() {
        var backlog = ReplyBacklog()
        let held = [backlog.hold(reply("a1"), for: alice, at: start), backlog.hold(reply("b1"), for: bob, at: start + .seconds(1)),
                    backlog.hold(reply("a2"), for: alice, at: start + .seconds(2))]
        #expect(held == [true, true, true])
        #expect(backlog.clients == [alice, bob] && backlog.holds(alice))
        #expect(backlog.stalled(alice) == start, "a second reply held does not count as one sent")
        #expect(backlog.first(for: alice) == reply("a1"))
        backlog.removeFirst(for: alice, at: start + .seconds(3))
        #expect(backlog.first(for: alice) == reply("a2") && backlog.stalled(alice) == start + .seconds(3))
        backlog.removeFirst(for: alice, at: start + .seconds(4))
        #expect(!backlog.holds(alice) && backlog.stalled(alice) == nil && backlog.clients == [bob])
        let dropped = backlog.drop(bob)
        #expect(dropped == 1 && backlog.isEmpty)
    }

    @Test("more bytes of a client's connection taken is a sign it reads: its wait starts again; the same count, or none known, is not")
    func acknowledgedBytes() {
        var backlog = ReplyBacklog()
        _ = backlog.hold(reply("a1"), for: alice, at: start)
        backlog.noteAcknowledged(1_000, for: alice, at: start + .seconds(1))
        #expect(backlog.stalled(alice) == start, "the first count seen is where it starts from")
        backlog.noteAcknowledged(1_000, for: alice, at: start + .seconds(2))
        backlog.noteAcknowledged(nil, for: alice, at: start + .seconds(2))
        #expect(backlog.stalled(alice) == start)
        backlog.noteAcknowledged(5_000, for: alice, at: start + .seconds(3))
        #expect(backlog.stalled(alice) == start + .seconds(3))
        backlog.noteAcknowledged(9_000, for: bob, at: start + .seconds(3))
        #expect(backlog.stalled(bob) == nil, "nothing is kept for a client with nothing held")
    }

    @Test("a client's held replies are tried again sooner after a reply left, later after each try that found its queue full, never later than the last retry")
    func retries() {
        var backlog = ReplyBacklog()
        #expect(backlog.nextDue == nil)
        _ = backlog.hold(reply("a1"), for: alice, at: start)
        _ = backlog.hold(reply("a2"), for: alice, at: start)
        #expect(!backlog.isDue(alice, at: start) && backlog.isDue(alice, at: start + ReplyBacklog.firstRetry))
        var now = start
        var delays: [Duration] = []
        for _ in 0..<8 {
            let due = backlog.nextDue!
            delays.append(due - now)
            now = due
            backlog.missed(alice, at: now)
        }
        #expect(delays == [5, 10, 20, 40, 80, 100, 100, 100].map { Duration.milliseconds($0) })
        backlog.removeFirst(for: alice, at: now)
        #expect(backlog.nextDue == now + ReplyBacklog.firstRetry, "a reply that left: tried again soon")
        #expect(!backlog.isDue(bob, at: now + .seconds(9)), "a client with nothing held is never due")
    }

    @Test("bounded per client by count and by bytes; a client's first reply is held whatever its size; others are not held back by it")
    func bounds() {
        var backlog = ReplyBacklog()
        let counted = (0...ReplyBacklog.maxReplies).map { backlog.hold(reply("a\($0)"), for: alice, at: start) }
        #expect(counted == Array(repeating: true, count: ReplyBacklog.maxReplies) + [false])
        let huge = backlog.hold(reply("huge", bytes: 3 * ReplyBacklog.maxBytes), for: bob, at: start)
        let afterHuge = backlog.hold(reply("small"), for: bob, at: start)
        #expect(huge && !afterHuge, "a first reply goes whatever its size; nothing more past the bytes")
        backlog.removeFirst(for: bob, at: start)
        let sized = [backlog.hold(reply("half", bytes: ReplyBacklog.maxBytes / 2), for: bob, at: start),
                     backlog.hold(reply("", bytes: ReplyBacklog.maxBytes / 2 - 8), for: bob, at: start),
                     backlog.hold(reply("past", bytes: 16), for: bob, at: start)]
        #expect(sized == [true, true, false])
        let (first, again) = (backlog.drop(alice), backlog.drop(alice))
        #expect(first == ReplyBacklog.maxReplies && again == 0)
    }
}
