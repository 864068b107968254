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
    /// the kill lands while checkpoints run beside the writer (`Checkpointer`) and after the writer took over one.
    @Test("every acknowledged write survives kill -9 mid-stream; the file passes integrity_check", arguments: [40, 400])
    func killNine(before: Int) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-kill-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let acknowledged = Acknowledged()

        let first = try ServiceProcess("recipe-storage", ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*", "--data", folder.path, "--seed-samples"])
        let endpoint = try await first.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#)
        var configuration = MessageClient.Configuration(endpoint: endpoint, serviceName: "storage")
        configuration.timeout = .seconds(2)
        configuration.attempts = 1
        let client = try MessageClient(configuration: configuration)

        // Writes and updates until the service dies under them.
        let writer = Task {
            for index in 0..<10_000 {
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
                    return
                }
            }
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while acknowledged.all.count < before && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(Int.random(in: 0..<40)))
        #expect(try await first.stop(signal: SIGKILL) == 128 + SIGKILL)
        await writer.value
        let written = acknowledged.all
        #expect(written.count >= before, "the service took writes before it was killed")
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
        #expect(try await second.stop() == 0)

        let store = try RecipeStore(folder: folder)
        #expect(try store.integrityCheck() == "ok")
        try store.close()
    }
}
