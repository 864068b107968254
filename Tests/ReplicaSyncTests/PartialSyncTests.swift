import Foundation
import RecipeModel
import RecipeProtocol
import RecipeStore
import ReplicaSync
import Synchronization
import Testing

/// A sync that stops part way (the receiver's disk fills on a later page) has moved the pages before it for good, and
/// says so: what a person is told, and where the next sync goes on from.
@Suite("Replica sync: a sync that stops part way")
struct PartialSyncTests {
    /// The receiver: counting from 1 the pages that hold records, refuses page `restartAt` once with `sync_restart`
    /// (restored behind its endpoint, say), and page `fullFrom` and every one after as a full disk would (nothing of
    /// it kept); passes the rest on.
    final class RefusingPages: ForwardingEndpoint, @unchecked Sendable {
        let forwardee: any SyncEndpoint
        let restartAt: Int?
        let fullFrom: Mutex<Int?>
        private let pages = Mutex(0)
        init(_ forwardee: any SyncEndpoint, restartAt: Int? = nil, fullFrom: Int? = nil) {
            self.forwardee = forwardee
            self.restartAt = restartAt
            self.fullFrom = Mutex(fullFrom)
        }
        func apply(from: String, records: [SyncRecord], cursor: Int?, to: String?, after: Int?, seen: SyncOps.SeenWrite?,
                   cursorMark: String?, unavailablePhotos: [String]?) async throws -> SyncOps.Apply.Response {
            let page = pages.withLock { $0 += records.isEmpty ? 0 : 1; return $0 }
            if page == restartAt { throw ServiceError(.syncRestart, "this storage has applied the feed up to 0, and the page continues it from 20") }
            if let full = fullFrom.withLock({ $0 }), page >= full {
                throw ServiceError(.storageFull, "sync.apply was not done: the disk recipe-storage writes to is full")
            }
            return try await forwardee.apply(from: from, records: records, cursor: cursor, to: to, after: after, seen: seen,
                                             cursorMark: cursorMark, unavailablePhotos: unavailablePhotos)
        }
    }

    @Test("the pages before the failure are applied and reported (by a failure too), the error is the receiver's; the next sync moves only the rest")
    func reportsWhatMoved() async throws {
        try await withReplicas(2) { replicas in
            for index in 0..<30 {
                _ = try await replicas[0].store.createRecipe(id: UUID(), RecipeDraft(name: "Soup \(index)"))
            }
            let laptop = RefusingPages(replicas[1], fullFrom: 3)
            let moved = Mutex((PullReport(), PullReport()))
            await #expect(throws: ServiceError.self) {
                _ = try await SyncEngine.sync(replicas[0], laptop, pageSize: 10) { sent, back in moved.withLock { $0 = (sent, back) } }
            }
            let (sent, back) = moved.withLock { $0 }
            #expect(sent.changed == 20 && sent.received == 20 && back.changed == 0, "\(sent), \(back)")
            #expect(try await replicas[1].store.recipeCount() == 20, "two pages of ten, whole")

            laptop.fullFrom.withLock { $0 = nil }
            let (again, _) = try await SyncEngine.sync(replicas[0], laptop, pageSize: 10) { sent, back in moved.withLock { $0 = (sent, back) } }
            #expect(again.changed == 10 && moved.withLock { $0.0 } == again, "the rest, and no more")
            try await expectConverged(replicas)
        }
    }

    @Test("a pull started again part way (sync_restart) counts the pages its first try moved, when it ends and when a later page fails")
    func restartKeepsTheCount() async throws {
        try await withReplicas(2) { replicas in
            for index in 0..<30 {
                _ = try await replicas[0].store.createRecipe(id: UUID(), RecipeDraft(name: "Soup \(index)"))
            }
            let laptop = RefusingPages(replicas[1], restartAt: 3)
            let moved = Mutex(PullReport())
            let report = try await SyncEngine.pull(from: replicas[0], to: laptop, pageSize: 10) { report in moved.withLock { $0 = report } }
            #expect(report.changed == 30 && report.received == 30, "two pages before the restart, one after: \(report)")
            #expect(moved.withLock { $0 } == report)
            #expect(report.restarts == ["this storage has applied the feed up to 0, and the page continues it from 20"], "why, for the worker's log")
            #expect(try await replicas[1].store.recipeCount() == 30)

            // The restart, then a full disk: what both tries moved is told with the error.
            for index in 30..<60 {
                _ = try await replicas[0].store.createRecipe(id: UUID(), RecipeDraft(name: "Soup \(index)"))
            }
            let filling = RefusingPages(replicas[1], restartAt: 2, fullFrom: 4)
            await #expect(throws: ServiceError.self) {
                _ = try await SyncEngine.pull(from: replicas[0], to: filling, pageSize: 10) { report in moved.withLock { $0 = report } }
            }
            // Page 1 applied; page 2 restarted the pull; page 2 again applied; page 3 refused (the fourth the disk is sent).
            #expect(moved.withLock { $0 }.changed == 20, "\(moved.withLock { $0 })")
            #expect(try await replicas[1].store.recipeCount() == 50)
        }
    }
}
