import Foundation
import GRDB
import RecipeModel
import RecipeProtocol
@testable import RecipeStore
import ReplicaSync
import TestRandom
import Testing

/// Where a catalogue entry's row goes when other entries' records claim its id is decided by the records alone
/// (`SyncLog.settleCatalogue`): the convergence property reaches such claims about once in a thousand histories;
/// here every case is made of them.
@Suite("Replica sync: catalogue row ids are the records' alone")
struct CatalogueRowIDProperty {
    static let names = ["apple", "basil", "onion", "spaghetti", "thyme"]

    @Test("entries made on three replicas under ids others claim too (two shared ids, the ids made from the names): two replicas taking them in other orders and pages hold the same row ids, and so does every replica after syncing",
          arguments: 0..<24)
    func sameRowIDsWhateverTheOrder(seed: UInt64) async throws {
        var random = SplitMix(seed: 0xCA7A_1065 &+ seed &* 0x9E37_79B9_7F4A_7C15)
        try await withReplicas(5) { replicas in
            let sources = Array(replicas[0..<3])
            let takers = Array(replicas[3...])
            let pool = [UUID(), UUID()] + Self.names.map { UUID(uuidString: SyncLog.derivedIngredientID($0))! }
            var made = 0
            for source in sources {
                for name in Self.names where Bool.random(using: &random) {
                    let id = pool[Int.random(in: 0..<pool.count, using: &random)]
                    // Refused when another entry holds that id here: a client's choice, not this test's.
                    if (try? await source.store.upsertIngredient(id: id, name: name, category: nil, aliases: ["\(name) \(made)"])) != nil { made += 1 }
                }
            }
            for taker in takers {
                for source in sources.shuffled(using: &random) {
                    _ = try await SyncEngine.pull(from: source, to: taker, pageSize: Int.random(in: 1...3, using: &random))
                }
            }
            try await expectSameContent(takers[0], takers[1])
            try await syncAll(replicas)
            try await expectConverged(replicas)
        }
    }

    @Test("an entry moved aside whose name's id another record claims takes the next id made from its name; the one that claims it keeps it")
    func movedAsideTwice() {
        let shared = UUID().uuidString
        let basils = SyncLog.derivedIngredientID("basil")
        let ids = SyncLog.catalogueRowIDs(["apple": shared, "basil": shared, "thyme": basils, "onion": basils])
        #expect(ids["apple"] == shared)
        #expect(ids["onion"] == basils, "onion claims basil's id and sorts before thyme")
        #expect(ids["thyme"] == SyncLog.derivedIngredientID("thyme"))
        #expect(ids["basil"] != basils && ids["basil"] != shared)
        #expect(Set(ids.values).count == 4)
    }

    @Test("a catalogue an earlier release placed by the order its records came in is settled when the storage starts, as a move (no new version)")
    func settledAtStart() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rv-settle-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let shared = UUID()
        var a = try RecipeStore(folder: root.appendingPathComponent("a"))
        let b = try RecipeStore(folder: root.appendingPathComponent("b"))
        _ = try await a.upsertIngredient(id: shared, name: "onion", category: nil, aliases: ["shallot"])
        _ = try await b.upsertIngredient(id: shared, name: "spaghetti", category: .grain, aliases: ["linguine"])
        try await syncAll([LocalReplica(store: a), LocalReplica(store: b)])
        let records = try await [a.syncRecord(.ingredient, id: "onion"), a.syncRecord(.ingredient, id: "spaghetti")]
        try a.close()
        // What an earlier release left where spaghetti came first: spaghetti on the id, onion on the one made from its name.
        let database = try DatabaseQueue(path: root.appendingPathComponent("a").appendingPathComponent(RecipeVault.databaseFileName).path)
        try await database.write { db in
            let onion = SyncLog.derivedIngredientID("onion")
            try db.execute(sql: "DELETE FROM ingredient_aliases")
            try db.execute(sql: "UPDATE ingredients SET id = 'x' WHERE name = 'onion'")
            try db.execute(sql: "UPDATE ingredients SET id = ? WHERE name = 'spaghetti'", arguments: [shared.uuidString])
            try db.execute(sql: "UPDATE ingredients SET id = ? WHERE name = 'onion'", arguments: [onion])
            try db.execute(sql: "INSERT INTO ingredient_aliases (ingredientId, alias) VALUES (?, 'shallot'), (?, 'linguine')",
                           arguments: [onion, shared.uuidString])
            try db.execute(sql: "DELETE FROM sync_pending")
            try db.execute(sql: "DELETE FROM sync_state WHERE key = 'catalogueSettled'") // an earlier release never settled it
        }
        try database.close()
        a = try RecipeStore(folder: root.appendingPathComponent("a"))
        #expect(try await a.findIngredient("shallot").id == shared)
        #expect(try await a.findIngredient("linguine").id.uuidString == SyncLog.derivedIngredientID("spaghetti"))
        #expect(try await [a.syncRecord(.ingredient, id: "onion"), a.syncRecord(.ingredient, id: "spaghetti")] == records)
        try await expectSameContent(LocalReplica(store: a), LocalReplica(store: b))
        try a.close()
        try b.close()
    }

    @Test("samples loaded where people's entries hold a sample's id: that sample takes the id made from its name on each replica, and they agree")
    func displacedSampleTakesItsNameID() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let sample = UUID(uuidString: "5A3F0001-0000-4000-8000-000000000000")!
            let name = try #require(try await withReplicas(1, samples: true) { try await $0[0].store.listIngredients(category: nil) }
                .first { $0.id == sample }?.name)
            _ = try await a.store.upsertIngredient(id: sample, name: "zucchini", category: nil, aliases: [])
            _ = try await b.store.upsertIngredient(id: sample, name: "yam", category: nil, aliases: [])
            for replica in replicas {
                #expect(try await replica.store.loadSamples().loaded)
                #expect(try await replica.store.findIngredient(name).id.uuidString == SyncLog.derivedIngredientID(name), "\(replica.name)")
            }
            try await expectConverged([a, b])
            #expect(try await a.store.findIngredient(name).id.uuidString == SyncLog.derivedIngredientID(name))
            #expect(try await a.store.findIngredient("yam").id == sample, "yam sorts before zucchini")
        }
    }
}
