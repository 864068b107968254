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
    /// The receiver: refuses its `failing`-th page and every one after, as a full disk would (nothing of it kept).
    final class FillingDisk: ForwardingEndpoint, @unchecked Sendable {
        let forwardee: any SyncEndpoint
        let failing: Int
        private let pages = Mutex(0)
        let full = Mutex(true)
        init(_ forwardee: any SyncEndpoint, failing: Int) {
            self.forwardee = forwardee
            self.failing = failing
        }
        func apply(from: String, records: [SyncRecord], cursor: Int?, to: String?, after: Int?, seen: SyncOps.SeenWrite?,
                   cursorMark: String?, unavailablePhotos: [String]?) async throws -> SyncOps.Apply.Response {
            let page = pages.withLock { $0 += records.isEmpty ? 0 : 1; return $0 }
            if full.withLock({ $0 }) && page >= failing {
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
            let laptop = FillingDisk(replicas[1], failing: 3)
            let moved = Mutex((PullReport(), PullReport()))
            await #expect(throws: ServiceError.self) {
                _ = try await SyncEngine.sync(replicas[0], laptop, pageSize: 10) { sent, back in moved.withLock { $0 = (sent, back) } }
            }
            let (sent, back) = moved.withLock { $0 }
            #expect(sent.changed == 20 && sent.received == 20 && back.changed == 0, "\(sent), \(back)")
            #expect(try await replicas[1].store.recipeCount() == 20, "two pages of ten, whole")

            laptop.full.withLock { $0 = false }
            let (again, _) = try await SyncEngine.sync(replicas[0], laptop, pageSize: 10) { sent, back in moved.withLock { $0 = (sent, back) } }
            #expect(again.changed == 10 && moved.withLock { $0.0 } == again, "the rest, and no more")
            try await expectConverged(replicas)
        }
    }

    /// The receiver: its `restarting`-th page is refused once with `sync_restart` (restored behind its endpoint, say).
    final class Restarting: ForwardingEndpoint, @unchecked Sendable {
        let forwardee: any SyncEndpoint
        let restarting: Int
        private let pages = Mutex(0)
        init(_ forwardee: any SyncEndpoint, restarting: Int) {
            self.forwardee = forwardee
            self.restarting = restarting
        }
        func apply(from: String, records: [SyncRecord], cursor: Int?, to: String?, after: Int?, seen: SyncOps.SeenWrite?,
                   cursorMark: String?, unavailablePhotos: [String]?) async throws -> SyncOps.Apply.Response {
            let page = pages.withLock { $0 += records.isEmpty ? 0 : 1; return $0 }
            if page == restarting { throw ServiceError(.syncRestart, "this storage has applied the feed up to 0, and the page continues it from 20") }
            return try await forwardee.apply(from: from, records: records, cursor: cursor, to: to, after: after, seen: seen,
                                             cursorMark: cursorMark, unavailablePhotos: unavailablePhotos)
        }
    }

    @Test("a pull started again part way (sync_restart) counts the pages its first try moved, when it ends and when a later page fails")
    func restartKeepsTheCount() async throws {
        try await withReplicas(2) { replicas in
            for index in 0..<30 {
                _ = try await replicas[0].store.createRecipe(id: UUID(), RecipeDraft(name: "Soup \(index)"))
            }
            let laptop = Restarting(replicas[1], restarting: 3)
            let moved = Mutex(PullReport())
            let report = try await SyncEngine.pull(from: replicas[0], to: laptop, pageSize: 10) { report in moved.withLock { $0 = report } }
            #expect(report.changed == 30 && report.received == 30, "two pages before the restart, one after: \(report)")
            #expect(moved.withLock { $0 } == report)
            #expect(try await replicas[1].store.recipeCount() == 30)

            // The restart, then a full disk: what both tries moved is told with the error.
            for index in 30..<60 {
                _ = try await replicas[0].store.createRecipe(id: UUID(), RecipeDraft(name: "Soup \(index)"))
            }
            let filling = FillingDisk(Restarting(replicas[1], restarting: 2), failing: 4)
            await #expect(throws: ServiceError.self) {
                _ = try await SyncEngine.pull(from: replicas[0], to: filling, pageSize: 10) { report in moved.withLock { $0 = report } }
            }
            // Page 1 applied; page 2 restarted the pull; page 2 again applied; page 3 refused (the fourth the disk is sent).
            #expect(moved.withLock { $0 }.changed == 20, "\(moved.withLock { $0 })")
            #expect(try await replicas[1].store.recipeCount() == 50)
        }
    }
}
