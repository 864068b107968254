import Foundation
import RecipeModel
import RecipeProtocol
@testable import RecipeStore
import TestScratch
import Testing

@Suite("Store hardening: temp files, job attempts, numbers that must not overflow")
struct HardeningStoreTests {
    @Test("the data folder, the backup folder and each backup's folder are made for the storage's user alone (0700)")
    func privateFolders() async throws {
        let root = Scratch.url("rv-private")
        let data = root.appendingPathComponent("nested/data")
        let store = try RecipeStore(folder: data)
        let backups = root.appendingPathComponent("backups")
        try store.confineBackups(to: backups)
        _ = try await store.createRecipe(id: UUID(), RecipeDraft(name: "Kept"))
        _ = try await store.backup(to: "tonight")
        func mode(_ url: URL) throws -> Int { try (FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int) ?? -1 }
        // Made with the process's umask (022 here), they were readable by every user of the machine.
        for folder in [data, backups, backups.appendingPathComponent("tonight")] {
            let found = try mode(folder)
            #expect(found == 0o700, "\(folder.path): \(String(found, radix: 8))")
        }
    }

    @Test("stale photo temp files are removed at start-up; blobs stay")
    func staleTemporaries() throws {
        let folder = Scratch.url("rv-blobs")
        let blobs = try PhotoBlobs(folder: folder)
        let hash = try blobs.store(imageBytes(.png))
        let shard = folder.appendingPathComponent(String(hash.prefix(2)))
        let stale = shard.appendingPathComponent(".\(hash).\(UUID().uuidString).tmp")
        try Data("half a photo".utf8).write(to: stale)
        _ = try PhotoBlobs(folder: folder) // a restart
        #expect(!FileManager.default.fileExists(atPath: stale.path), "the temp file a killed write left is gone")
        #expect(blobs.contains(hash))
        #expect(!blobs.contains("../../../../etc/passwd"), "only a 64-hex hash can name a blob")
    }

    @Test("a URL begun twice without a result is failed with its reason, never begun a third time")
    func jobAttempts() async throws {
        let store = try temporaryStore()
        let job = try await store.createJob(id: UUID(), urls: ["https://example.com/kills-the-worker", "https://example.com/fine"])
        #expect(try await store.startJobItem(jobID: job.id, position: 0))
        #expect(try await store.startJobItem(jobID: job.id, position: 0))
        #expect(try await store.startJobItem(jobID: job.id, position: 0) == false)
        let item = try #require(try await store.job(job.id).items?.first)
        #expect(item.state == .failed)
        #expect(item.error?.message.contains("stopped 2 times") == true)
        #expect(try await store.startJobItem(jobID: job.id, position: 1), "the rest of the batch goes on")
    }

    @Test("a run beginning again what it began itself is not counted; two other runs are; a run of more than 64 characters is refused")
    func jobAttemptsByRun() async throws {
        let store = try temporaryStore()
        let job = try await store.createJob(id: UUID(), urls: ["https://example.com/slow"])
        for _ in 0..<5 { #expect(try await store.startJobItem(jobID: job.id, position: 0, run: "run-a"), "its storage was away each time") }
        #expect(try await store.startJobItem(jobID: job.id, position: 0, run: "run-b"), "run-a stopped: one stop")
        #expect(try await store.startJobItem(jobID: job.id, position: 0, run: "run-b"))
        #expect(try await store.startJobItem(jobID: job.id, position: 0, run: "run-c") == false, "run-b stopped too: given up")
        let item = try #require(try await store.job(job.id).items?.first)
        #expect(item.state == .failed && item.error?.message.contains("stopped 2 times") == true)
        for run in ["", String(repeating: "r", count: 65)] {
            let error = await #expect(throws: ServiceError.self) { try await store.startJobItem(jobID: job.id, position: 0, run: run) }
            #expect(error?.code == .invalidArgument && error?.message.contains("1 to 64") == true)
        }
    }

    @Test("a stored clock far in the future cannot trap the next write")
    func clampedClock() async throws {
        let store = try temporaryStore()
        try await store.pool.write { db in
            try db.execute(sql: "UPDATE sync_state SET value = '9223372036854775807' WHERE key IN ('wall', 'counter')")
        }
        let created = try await store.createRecipe(id: UUID(), RecipeDraft(name: "After a bad clock"))
        #expect(created.created)
    }

    @Test("a recipe whose value cannot be read back is refused, and nothing is written", arguments: [
        RecipeDraft(name: "Nines", ingredients: [.init(text: String(repeating: "9", count: 400) + " cups flour")]),
        RecipeDraft(name: "Long", prepTime: "P99999999999999999999Y"),
        RecipeDraft(name: "Overflow", prepTime: "PT9223372036854775807M", cookTime: "PT9223372036854775807M"),
        RecipeDraft(name: "Tiny servings", servings: 1e-300),
        RecipeDraft(name: "Page", sourcePageNumber: Int.max),
    ])
    func refusedNumbers(draft: RecipeDraft) async throws {
        let store = try temporaryStore()
        let error = await #expect(throws: ServiceError.self) { _ = try await store.createRecipe(id: UUID(), draft) }
        #expect(error?.code == .invalidArgument)
        #expect(try await store.isEmpty())
    }
}

/// A store in a fresh temporary folder (removed when the tests exit).
func temporaryStore() throws -> RecipeStore {
    try RecipeStore(folder: Scratch.url("rv-store"))
}
