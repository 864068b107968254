import Foundation
import GRDB
import Logging
import RecipeModel
import RecipeProtocol
import RecipeStore
import ReplicaSync
import Testing

/// A new replica joining by a snapshot (docs/SYNC.md, "A new replica: a snapshot, then the feed") while either side is
/// killed with -9 and started again, as a container's restart policy would: storages as processes, the sync engine
/// over real sockets (as the worker runs it, with a snapshot for any non-empty source so a small collection does).
@Suite("kill -9 during a snapshot join", .serialized)
struct SnapshotJoinKillTests {
    static let recipeCount = 150
    static let photoCount = 6

    @Test("either side killed at moments spread over the copy and started again: the sync ends in seconds, the next completes the join, both replicas export the same bytes and pass recipes check")
    func killedMidJoin() async throws {
        let rig = try await ReplicaRig(2)
        do {
            try await populate(rig)
            // An undisturbed join first, timed: the kills are spread over how long one takes here.
            let start = ContinuousClock.now
            _ = try await SyncEngine.pull(from: try remote(rig, 0), to: try remote(rig, 1), snapshotAbove: 0)
            let join = ContinuousClock.now - start
            try await expectJoined(rig, note: "the undisturbed join")
            let history = try await DatabaseQueue(path: rig.nodes[1].folder + "/" + RecipeVault.databaseFileName, configuration: Self.readOnly)
                .read { db in try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'incarnations'") }
            #expect(history?.contains("started from a snapshot of") == true, "the first join went by records: \(history ?? "no history")")
            for (round, fraction) in [0.1, 0.3, 0.5, 0.7, 0.9, 1.1].enumerated() {
                // A new empty replica in the place of the second.
                try await rig.nodes[1].stop()
                rig.nodes[1] = try StorageNode()
                try await rig.nodes[1].start()
                let killed = round % 2 == 0 ? 1 : 0
                let (source, target) = (try remote(rig, 0), try remote(rig, 1))
                let began = ContinuousClock.now
                let pull = Task { try await SyncEngine.pull(from: source, to: target, snapshotAbove: 0) }
                try await Task.sleep(for: join * fraction)
                try await rig.nodes[killed].stop(signal: SIGKILL)
                try await rig.nodes[killed].start()
                // The request out when a side died ends with its connection and goes again to the side started again: the
                // pull ends in seconds, joined or with the error that stopped it. (It waited out the 15 minutes a snapshot's
                // install may take, for a reply that could never come.)
                _ = try? await pull.value
                #expect(ContinuousClock.now - began < .seconds(60), "round \(round): the pull took \(ContinuousClock.now - began)")
                for _ in 0..<3 { _ = try await SyncEngine.sync(try remote(rig, 0), try remote(rig, 1), snapshotAbove: 0) }
                try await expectJoined(rig, note: "round \(round): \(killed == 1 ? "the joining replica" : "the source") killed at \(Int(fraction * 100))% of a join")
            }
        } catch {
            await rig.shutdown()
            throw error
        }
        await rig.shutdown()
    }

    /// Node `index` as the worker reaches it, with a wait long enough that a try waiting out its timeout would show.
    private func remote(_ rig: ReplicaRig, _ index: Int) throws -> RemoteReplica {
        try RemoteReplica(endpoint: rig.nodes[index].endpoint, timeout: .seconds(120), logger: Logger(label: "test"))
    }

    /// Stops the first replica, writes the recipes and photos into its data folder through the store, and starts it again.
    private func populate(_ rig: ReplicaRig) async throws {
        try await rig.nodes[0].stop()
        let store = try RecipeStore(folder: URL(fileURLWithPath: rig.nodes[0].folder))
        var ids: [UUID] = []
        for index in 0..<Self.recipeCount {
            var draft = RecipeDraft(name: "Joined recipe \(index)")
            draft.ingredients = (1...6).map { RecipeDraft.Line(text: "\($0 * 50) g ingredient \(index)-\($0)") }
            draft.instructions = (1...4).map { RecipeDraft.Step(text: "Step \($0) of recipe \(index): stir, then rest.") }
            draft.keywords = ["join", "part \(index % 8)"]
            ids.append(try await store.createRecipe(id: UUID.timeOrdered(), draft).recipe.id)
        }
        for (seed, id) in ids.prefix(Self.photoCount).enumerated() {
            _ = try await store.addPhoto(recipeID: id, bytes: chaosJPEG(seed: UInt64(seed + 1)), position: nil)
        }
        try store.close()
        try await rig.nodes[0].start()
    }

    static var readOnly: Configuration {
        var configuration = Configuration()
        configuration.readonly = true
        return configuration
    }

    /// The joined replica holds every recipe and photo of the first, both pass `recipes check`, and both export the
    /// same bytes.
    private func expectJoined(_ rig: ReplicaRig, note: Comment) async throws {
        let counts = try await DatabaseQueue(path: rig.nodes[1].folder + "/" + RecipeVault.databaseFileName, configuration: Self.readOnly)
            .read { db in
                (try Int.fetchOne(db, sql: "SELECT count(*) FROM recipes") ?? 0,
                 try Int.fetchOne(db, sql: "SELECT count(DISTINCT sha256) FROM recipe_photos") ?? 0)
            }
        #expect(counts.0 == Self.recipeCount && counts.1 == Self.photoCount, "\(counts) — \(note)")
        for index in rig.nodes.indices {
            let check = try await recipes(["check", "--json"], storage: rig.nodes[index].endpoint)
            #expect(check.status == 0, "node \(index): \(check.output) — \(note)")
        }
        let photos = try FileManager.default.subpathsOfDirectory(atPath: rig.nodes[1].folder + "/" + RecipeVault.photoFolderName)
            .filter { $0.split(separator: "/").last?.count == 64 }
        #expect(photos.count == Self.photoCount, "\(photos) — \(note)")
        try await rig.expectSameExports()
    }
}
