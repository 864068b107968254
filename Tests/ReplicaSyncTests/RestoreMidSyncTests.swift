import Foundation
import RecipeModel
import RecipeProtocol
import RecipeStore
import ReplicaSync
import Testing

/// A target that is one store until the first page is applied to it, and from then on another: a storage
/// restored from a backup behind the same endpoint while a sync was running against it.
final class RestoredMidSync: ForwardingEndpoint, @unchecked Sendable {
    // @unchecked: `swapped` is only touched with `lock` held.
    private let before: LocalReplica
    private let after: LocalReplica
    private let lock = NSLock()
    private var swapped = false
    init(before: LocalReplica, after: LocalReplica) {
        self.before = before
        self.after = after
    }

    var forwardee: any SyncEndpoint { lock.withLock { swapped ? after : before } }
    func apply(from: String, records: [SyncRecord], cursor: Int?, to: String?, after: Int?, seen: SyncOps.SeenWrite?,
               cursorMark: String?, unavailablePhotos: [String]?) async throws -> SyncOps.Apply.Response {
        lock.withLock { swapped = true } // the restore lands just before the first page
        return try await forwardee.apply(from: from, records: records, cursor: cursor, to: to, after: after, seen: seen, cursorMark: cursorMark,
                                         unavailablePhotos: unavailablePhotos)
    }
}

/// Found by the kill -9 chaos run (seed 4435834597774316294): a storage restored from a backup while the worker
/// synced it took pages read for the replica it had been — its cursor, and leaving out that replica's own
/// writes — and remembered their end as its cursor. What the backup lacked never came back, and every later sync
/// said there was nothing to send.
@Suite("Replica sync: a storage restored in the middle of a sync")
struct RestoreMidSyncTests {
    func titles(_ store: RecipeStore) async throws -> Set<String> {
        Set(try await store.listRecipes(RecipeListQuery(limit: RecipeListQuery.maxLimit)).recipes.map(\.name))
    }

    func add(_ name: String, to store: RecipeStore) async throws {
        _ = try await store.createRecipe(id: UUID.timeOrdered(), RecipeDraft(name: name))
    }

    @Test("pages read for the replica it was are refused; the sync starts again and nothing is lost")
    func restoredDuringAPull() async throws {
        try await withReplicas(2) { replicas in
            let (source, target) = (replicas[0], replicas[1])
            try await add("on the target, in the backup", to: target.store)
            try await syncAll(replicas)
            let backup = target.store.folder.deletingLastPathComponent().appendingPathComponent("target-backup").path
            _ = try await target.store.backup(to: backup)
            // After the backup: two recipes made on the target reach the source, and the target catches up with it.
            try await add("on the target, after the backup 1", to: target.store)
            try await add("on the target, after the backup 2", to: target.store)
            for index in 0..<5 { try await add("on the source \(index)", to: source.store) }
            try await syncAll(replicas)
            for index in 5..<10 { try await add("on the source \(index)", to: source.store) }

            let restored = try RecipeStore(folder: URL(fileURLWithPath: backup))
            defer { try? restored.close() }
            #expect(restored.incarnationNote != nil)
            _ = try await SyncEngine.pull(from: source, to: RestoredMidSync(before: target, after: LocalReplica(store: restored)), pageSize: 2)
            try await syncAll([source, LocalReplica(store: restored)])
            let expected = try await titles(source.store)
            #expect(expected.count == 13)
            #expect(try await titles(restored) == expected)
        }
    }

    @Test("sync.apply with a replica id or a cursor that is not this storage's any more applies nothing")
    func conditionalApply() async throws {
        try await withReplicas(2) { replicas in
            let (source, target) = (replicas[0], replicas[1])
            for index in 0..<4 { try await add("r\(index)", to: source.store) }
            let sourceID = try await source.info().replicaID
            let targetID = try await target.info().replicaID
            let feed = try await source.changes(since: 0, exclude: targetID, limit: 2)
            // Another replica id than this storage's: refused, nothing applied, the cursor stays.
            let wrongID = await #expect(throws: ServiceError.self) {
                _ = try await target.apply(from: sourceID, records: feed.records, cursor: feed.next, to: "0123456789ab", after: 0)
            }
            #expect(wrongID?.code == .syncRestart && wrongID?.message.contains(targetID) == true, "\(String(describing: wrongID))")
            // A page that continues the feed from further on than this storage has applied: refused too.
            let gap = await #expect(throws: ServiceError.self) {
                _ = try await target.apply(from: sourceID, records: feed.records, cursor: feed.next + 5, to: targetID, after: feed.next)
            }
            #expect(gap?.code == .syncRestart && gap?.message.contains("up to 0") == true, "\(String(describing: gap))")
            #expect(try await titles(target.store).isEmpty)
            #expect(try await target.cursor(peer: sourceID).seq == 0)
            // The page that does continue from here is applied, and applying it again (a retry) changes nothing.
            let applied = try await target.apply(from: sourceID, records: feed.records, cursor: feed.next, to: targetID, after: 0)
            #expect(applied.changed == 2)
            let again = try await target.apply(from: sourceID, records: feed.records, cursor: feed.next, to: targetID, after: 0)
            #expect(again.changed == 0)
            #expect(try await target.cursor(peer: sourceID).seq == feed.next)
            #expect(try await titles(target.store).count == 2)
        }
    }
}
