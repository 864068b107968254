import Foundation
import RecipeModel
import RecipeProtocol
import RecipeStore
import ReplicaSync
import Testing

/// Two syncs of the same pair at once: a worker beside each replica, each naming the other as its `--replica`.
@Suite("Replica sync: two syncs of one pair at once")
struct ConcurrentSyncTests {
    @Test("a page applied after a later one leaves the cursor where the later one put it, so the later sync's next page is not refused")
    func stalePageKeepsCursor() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            for index in 0..<9 {
                _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Recipe \(index)", ingredients: [.init(text: "\(index + 1) eggs")]))
            }
            let source = try await a.info().replicaID, target = try await b.info().replicaID
            // Both syncs read from cursor 0; the one with the larger page applies first.
            let short = try await a.changes(since: 0, exclude: target, limit: 3)
            let long = try await a.changes(since: 0, exclude: target, limit: 6)
            _ = try await b.apply(from: source, records: long.records, cursor: long.next, to: target, after: 0)
            _ = try await b.apply(from: source, records: short.records, cursor: short.next, to: target, after: 0)
            #expect(try await b.cursor(peer: source).seq == long.next, "the cursor stays where the longer page put it")
            // The first sync goes on from where it was: its next page is taken, not refused with sync_restart.
            let next = try await a.changes(since: long.next, exclude: target, limit: 6)
            _ = try await b.apply(from: source, records: next.records, cursor: next.next, to: target, after: long.next)
            try await expectSameContent(a, b)
        }
    }

    @Test("a target whose cursor is past the source's whole feed (the source was set back) is set back to it by the pull: the cursor then follows the feed again")
    func cursorPastTheFeedIsSetBack() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            for index in 0..<5 {
                _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Recipe \(index)"))
            }
            let source = try await a.info().replicaID
            _ = try await b.apply(from: source, records: [], cursor: 1_000)
            _ = try await SyncEngine.pull(from: a, to: b, pageSize: 2)
            try await expectSameContent(a, b)
            #expect(try await b.cursor(peer: source).seq == a.info().latestSeq, "not left at 1000, past the feed")
        }
    }

    @Test("two pulls of the same direction at once, page by page, both finish without an error and leave the same content")
    func twoPullsAtOnce() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            for index in 0..<40 {
                _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Recipe \(index)", ingredients: [.init(text: "\(index + 1) eggs")]))
            }
            for round in 0..<5 {
                _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Round \(round)"))
                async let first = SyncEngine.pull(from: a, to: b, pageSize: 1)
                async let second = SyncEngine.pull(from: a, to: b, pageSize: 2)
                _ = try await (first, second)
            }
            try await expectSameContent(a, b)
        }
    }
}
