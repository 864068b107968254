import Foundation
import Messaging
import RecipeModel
import RecipeProtocol
import RecipeStore
import Synchronization
import Testing

/// Ids and versions the service acknowledged.
final class Acknowledged: Sendable {
    private let state = Mutex<[UUID: Int]>([:])
    func record(_ id: UUID, version: Int) { state.withLock { $0[id] = version } }
    var all: [UUID: Int] { state.withLock { $0 } }
}

@Suite("recipe-storage durability")
struct DurabilityTests {
    /// 40 writes end before the first checkpoint; 400 take the write-ahead log past its threshold several times, so
    /// the kill lands while checkpoints run beside the writer (`Checkpointer`) and after the writer took over one. The
    /// storage restarted on the folder keeps its replica id: nothing but its own writes changed its file (`WriteMark`).
    @Test("every acknowledged write survives kill -9 mid-stream; the file passes integrity_check", arguments: [40, 400])
    func killNine(before: Int) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-kill-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let acknowledged = Acknowledged()
        let failures = Mutex<[String]>([])

        let first = try ServiceProcess("recipe-storage", ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*", "--data", folder.path, "--seed-samples"])
        let endpoint = try await first.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#)
        var configuration = MessageClient.Configuration(endpoint: endpoint, serviceName: "storage")
        // Each write waits for its fsync; on a machine busy with the rest of the suite one can take seconds. (The
        // call in flight at the kill waits this out: the client's wait is not cancelled.)
        configuration.timeout = .seconds(5)
        configuration.attempts = 1
        let client = try MessageClient(configuration: configuration)

        // Writes and updates until the service dies under them. A write that fails before the kill (a reply slower
        // than the client waits for, on a machine busy with other tests) is not acknowledged and the writer goes on;
        // it stops when told the service was killed.
        let writer = Task {
            for index in 0..<10_000 where !Task.isCancelled {
                let id = UUID()
                do {
                    let draft = RecipeDraft(name: "Recipe \(index)", ingredients: [.init(text: "\(index) g flour")], notes: "written \(index)")
                    let created = try await client.call(RecipeOps.Create.self, .init(id: id, recipe: draft)).recipe
                    acknowledged.record(id, version: created.version)
                    if index % 3 == 0 {
                        var edit = draft
                        edit.notes = "edited \(index)"
                        let updated = try await client.call(RecipeOps.Update.self, .init(id: id, expectedVersion: created.version, recipe: edit))
                        acknowledged.record(id, version: updated.version)
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        // Alone, 400 writes take about 2 s; the whole suite on two cores has slowed them 30-fold (239 in 60 s), so the
        // wait is generous. It is a bound, not a speed test: the figure is in the expectation if it is ever reached.
        let started = ContinuousClock.now
        let deadline = started + .seconds(300)
        while acknowledged.all.count < before && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let waited = ContinuousClock.now - started
        try await Task.sleep(for: .milliseconds(Int.random(in: 0..<40)))
        #expect(try await first.stop(signal: SIGKILL) == 128 + SIGKILL)
        writer.cancel()
        await writer.value
        let written = acknowledged.all
        #expect(written.count >= before, "the service took writes before it was killed (\(written.count) in \(waited)); failed: \(failures.withLock { $0.prefix(3) })")
        let database = folder.appendingPathComponent(RecipeVault.databaseFileName).path
        let inFile = (try FileManager.default.attributesOfItem(atPath: database)[.size] as? Int) ?? 0
        if before >= 400 { #expect(inFile > 1_500_000, "checkpoints had moved pages into the file (\(inFile) bytes) before the kill") }

        let second = try ServiceProcess("recipe-storage", ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*", "--data", folder.path, "--seed-samples"])
        configuration.endpoint = try await second.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#)
        configuration.attempts = 3
        let again = try MessageClient(configuration: configuration)
        for (id, version) in written {
            let recipe = try await again.call(RecipeOps.Get.self, .init(id: id)).recipe
            #expect(recipe.version >= version, "\(recipe.name) is at version \(recipe.version), acknowledged \(version)")
            #expect(recipe.ingredients.count == 1)
        }
        let stats = try await again.call(StorageOps.Stats.self, Empty())
        #expect(stats.starters == 8, "samples were not loaded a second time")
        // Its own checkpoints, the kill in the middle of one too, never read as its file changed behind its back.
        #expect(!second.printed.contains("new replica incarnation"), "\(second.printed)")
        #expect(try await second.stop() == 0)

        let store = try RecipeStore(folder: folder)
        #expect(try store.integrityCheck() == "ok")
        try store.close()
    }

    /// A backup copies the database and then the photos; a kill -9 (or a power cut) part way used to leave a folder
    /// that looked like a backup: its database rolled back to empty by SQLite, or its photos part-copied.
    @Test("kill -9 during recipes backup, at moments spread over the copy: the folder is a whole backup, or a storage refuses to start on it")
    func killDuringBackup() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rv-backup-kill-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let data = scratch.appendingPathComponent("data")
        // 30 recipes with 4 photos of 500 KB each: the photos are most of the copy.
        var photos: [UUID: Int] = [:]
        do {
            let store = try RecipeStore(folder: data)
            let filler = Data((0..<500_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
            for index in 0..<30 {
                let draft = RecipeDraft(name: "Backed up \(index)", ingredients: [.init(text: "\(index) g flour")], notes: "note \(index)")
                let id = try await store.createRecipe(id: UUID(), draft).recipe.id
                for photo in 0..<4 {
                    let bytes = Data([0xFF, 0xD8, 0xFF, 0xE0, UInt8(index), UInt8(photo)]) + filler
                    photos[id] = try await store.addPhoto(recipeID: id, bytes: bytes, position: nil).count
                }
            }
            try store.close()
        }

        /// A folder a killed backup left: nothing, a whole backup, or one a storage refuses to start on.
        enum Left: Equatable { case nothing, whole, refused }
        func inspect(_ folder: URL) async throws -> Left {
            let contents = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            if contents.isEmpty { return .nothing }
            if contents.contains(RecipeVault.unfinishedBackupFileName) {
                let refused = try ServiceProcess("recipe-storage", ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*", "--data", folder.path])
                #expect(try await refused.waitForExit(timeout: .seconds(30)) == 1, "\(refused.printed)")
                #expect(refused.printed.contains("holds a backup that recipe-storage began and did not finish"), "\(refused.printed)")
                #expect(refused.printed.contains("not a copy to restore from"), "\(refused.printed)")
                return .refused
            }
            // No note: it must be all of it, every photo readable.
            let store = try RecipeStore(folder: folder)
            defer { try? store.close() }
            #expect(try store.integrityCheck() == "ok")
            for (id, count) in photos {
                let recipe = try await store.recipe(id)
                #expect(recipe.photos.count == count, "\(folder.lastPathComponent): \(recipe.name)")
                for position in 0..<count { _ = try await store.photo(recipeID: id, position: position) }
            }
            return .whole
        }

        /// Starts a storage on the data folder, asks for a backup into `folder`, and kills it after `delay` (nil: lets
        /// the backup finish). Gives how long the backup took when it finished.
        func backup(into folder: URL, killAfter delay: Duration?) async throws -> Duration? {
            let storage = try ServiceProcess("recipe-storage", ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*", "--data", data.path])
            var configuration = MessageClient.Configuration(endpoint: try await storage.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#),
                                                            serviceName: "storage")
            // A killed storage never answers: the call waits out only a little more than the kill's moment.
            configuration.timeout = delay.map { $0 + .seconds(2) } ?? .seconds(60)
            configuration.attempts = 1
            let client = try MessageClient(configuration: configuration)
            let started = ContinuousClock.now
            let call = Task { try await client.call(BackupOps.Backup.self, .init(folder: folder.path)) }
            guard let delay else {
                let made = try await call.value
                let took = ContinuousClock.now - started
                #expect(made.recipes == 30 && made.photos == 120 && made.lostPhotos == nil)
                #expect(try await storage.stop() == 0)
                return took
            }
            try await Task.sleep(for: delay)
            #expect(try await storage.stop(signal: SIGKILL) == 128 + SIGKILL)
            _ = try? await call.value
            return nil
        }

        let took = try #require(try await backup(into: scratch.appendingPathComponent("whole"), killAfter: nil))
        #expect(try await inspect(scratch.appendingPathComponent("whole")) == .whole)
        var left: [Left] = []
        for round in 0..<5 {
            let folder = scratch.appendingPathComponent("killed-\(round)")
            _ = try await backup(into: folder, killAfter: took * ((Double(round) + 0.5) / 5))
            left.append(try await inspect(folder))
        }
        // The kills land before, during and after the copy; at least one during (it takes about `took`).
        #expect(left.contains(.refused), "\(left), the backup took \(took)")
    }
}

