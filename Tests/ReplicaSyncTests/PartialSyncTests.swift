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
}
