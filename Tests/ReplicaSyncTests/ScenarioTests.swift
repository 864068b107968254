import Foundation
import RecipeModel
import RecipeProtocol
import RecipeStore
import ReplicaSync
import Testing

@Suite("Replica sync: deterministic scenarios")
struct ScenarioTests {
    /// A recipe made on `a` and synced to `b`: the common starting point of a concurrent edit.
    func shared(_ a: LocalReplica, _ b: LocalReplica, name: String = "Soup") async throws -> Recipe {
        let (recipe, _) = try await a.store.createRecipe(
            id: UUID(), RecipeDraft(name: name, ingredients: [.init(text: "1 onion")], instructions: [.init(text: "Cook.")], notes: "base"))
        try await syncAll([a, b])
        return recipe
    }

    func edit(_ replica: LocalReplica, _ id: UUID, _ change: (inout RecipeDraft) -> Void) async throws {
        let current = try await replica.store.recipe(id)
        var draft = RecipeDraft(current)
        change(&draft)
        _ = try await replica.store.updateRecipe(id: id, expectedVersion: current.version, draft)
    }

    @Test("a change on one replica reaches the other, and a second sync changes nothing")
    func oneWay() async throws {
        try await withReplicas(2, samples: true) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let recipe = try await shared(a, b)
            #expect(try await b.store.recipe(recipe.id).name == "Soup")
            try await edit(a, recipe.id) {
                $0.notes = "more salt"
                $0.instructions.append(.init(text: "Season to taste.", section: "Finishing", title: "Season"))
            }
            try await syncAll([a, b])
            #expect(try await b.store.recipe(recipe.id).notes == "more salt")
            let steps = try await b.store.recipe(recipe.id).instructions
            #expect(steps.map(\.title) == [nil, "Season"] && steps.map(\.section) == [nil, "Finishing"], "step titles and sections travel")
            try await expectSameContent(a, b)
            #expect(try await syncAll([a, b]) == 0)
        }
    }

    @Test("starters loaded on both replicas are the same records and never conflict")
    func startersAgree() async throws {
        try await withReplicas(2, samples: true) { replicas in
            let report = try await SyncEngine.sync(replicas[0], replicas[1])
            #expect(report.aToB.changed == 0 && report.bToA.changed == 0)
            #expect(report.aToB.conflicts == 0 && report.bToA.conflicts == 0)
            #expect(try await replicas[0].store.canonicalDump() == replicas[1].store.canonicalDump())
        }
    }

    @Test("edits to different fields of one recipe on two replicas both survive")
    func differentFields() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let recipe = try await shared(a, b)
            try await edit(a, recipe.id) { $0.notes = "from a" }
            try await edit(b, recipe.id) { $0.name = "Onion soup" }
            try await syncAll([a, b])
            for replica in replicas {
                let merged = try await replica.store.recipe(recipe.id)
                #expect(merged.notes == "from a")
                #expect(merged.name == "Onion soup")
                #expect(try await replica.store.recipes(origin: .conflictedCopy).isEmpty)
            }
            try await expectSameContent(a, b)
        }
    }

    @Test("the same field changed on both: one winner everywhere, the loser kept once as a conflicted copy",
          arguments: [false, true])
    func sameField(bFirst: Bool) async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let recipe = try await shared(a, b)
            // The later write wins; which replica writes later is the argument.
            let (first, second) = bFirst ? (b, a) : (a, b)
            try await edit(first, recipe.id) { $0.notes = "first" }
            try await Task.sleep(for: .milliseconds(5))
            try await edit(second, recipe.id) { $0.notes = "second" }
            // Arrival order: the first writer's change is pulled first in one case, second in the other.
            _ = try await SyncEngine.pull(from: first, to: second)
            _ = try await SyncEngine.pull(from: second, to: first)
            try await syncAll([a, b])
            for replica in replicas {
                #expect(try await replica.store.recipe(recipe.id).notes == "second")
                let copies = try await replica.store.recipes(origin: .conflictedCopy)
                #expect(copies.count == 1)
                #expect(copies.first?.notes == "first")
                #expect(copies.first?.name == "Soup (conflicted copy)")
                #expect(try await replica.store.syncInfo().conflictsCreated <= 1)
            }
            try await expectSameContent(a, b)
            #expect(try await syncAll([a, b]) == 0)
        }
    }

    @Test("both replicas seeing the same conflict make the same single copy")
    func conflictSeenOnBoth() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let recipe = try await shared(a, b)
            try await edit(a, recipe.id) { $0.name = "Soup A" }
            try await edit(b, recipe.id) { $0.name = "Soup B" }
            // Each pulls the other's version before either has the merged one: both detect the conflict.
            let aFeed = try await a.changes(since: 0, exclude: nil, limit: 1_000)
            let bFeed = try await b.changes(since: 0, exclude: nil, limit: 1_000)
            let aID = try await a.info().replicaID
            let bID = try await b.info().replicaID
            _ = try await b.apply(from: aID, records: aFeed.records, cursor: nil)
            _ = try await a.apply(from: bID, records: bFeed.records, cursor: nil)
            try await syncAll([a, b])
            for replica in replicas {
                #expect(try await replica.store.recipes(origin: .conflictedCopy).count == 1)
            }
            try await expectSameContent(a, b)
        }
    }

    @Test("delete against a concurrent edit: the edit brings the recipe back, in either order", arguments: [false, true])
    func deleteVersusEdit(deleteFirst: Bool) async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let recipe = try await shared(a, b)
            if deleteFirst {
                try await a.store.deleteRecipe(id: recipe.id)
                try await edit(b, recipe.id) { $0.notes = "kept" }
            } else {
                try await edit(b, recipe.id) { $0.notes = "kept" }
                try await a.store.deleteRecipe(id: recipe.id)
            }
            try await syncAll([a, b])
            for replica in replicas {
                #expect(try await replica.store.recipe(recipe.id).notes == "kept")
            }
            try await expectSameContent(a, b)
            // A delete made after seeing the edit wins.
            try await a.store.deleteRecipe(id: recipe.id)
            try await syncAll([a, b])
            for replica in replicas {
                await #expect(throws: ServiceError.self) { try await replica.store.recipe(recipe.id) }
            }
            try await expectSameContent(a, b)
        }
    }

    @Test("the same photo added on both replicas ends as one photo and one blob, without a conflict")
    func samePhotoBothSides() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let recipe = try await shared(a, b)
            let bytes = jpegBytes(seed: 7)
            _ = try await a.store.addPhoto(recipeID: recipe.id, bytes: bytes, position: nil)
            _ = try await b.store.addPhoto(recipeID: recipe.id, bytes: bytes, position: nil)
            let report = try await SyncEngine.sync(a, b)
            #expect(report.aToB.photos == 0 && report.bToA.photos == 0) // each already had the blob
            try await syncAll([a, b])
            for replica in replicas {
                #expect(try await replica.store.recipe(recipe.id).photos.count == 1)
                #expect(try await replica.store.recipes(origin: .conflictedCopy).isEmpty)
            }
            try await expectSameContent(a, b)
        }
    }

    @Test("photos move by hash: only missing blobs are sent, and a damaged blob is refused")
    func photosByHash() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let recipe = try await shared(a, b)
            let bytes = jpegBytes(seed: 11, count: 50_000)
            _ = try await a.store.addPhoto(recipeID: recipe.id, bytes: bytes, position: nil)
            let first = try await SyncEngine.pull(from: a, to: b)
            #expect(first.photos == 1 && first.photoBytes == bytes.count)
            // A second recipe with the same photo moves no bytes.
            let (other, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Other"))
            _ = try await a.store.addPhoto(recipeID: other.id, bytes: bytes, position: nil)
            let second = try await SyncEngine.pull(from: a, to: b)
            #expect(second.photos == 0 && second.changed == 1)
            var damaged = jpegBytes(seed: 12)
            let claimed = try await a.store.photo(recipeID: recipe.id, position: 0).0.sha256
            damaged[10] ^= 0xFF
            #expect(throws: ServiceError.self) { try b.store.putPhotoBlob(sha256: claimed, bytes: damaged) }
            // A record whose photo has not arrived is held (nothing of it applied) while the rest of the page applies;
            // once the blob is here, the next apply takes it.
            let (third, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Third"))
            let thirdBytes = jpegBytes(seed: 13)
            _ = try await a.store.addPhoto(recipeID: third.id, bytes: thirdBytes, position: nil)
            let (fourth, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Fourth"))
            let feed = try await a.changes(since: 0, exclude: nil, limit: 1_000)
            let aID = try await a.info().replicaID
            let applied = try await b.apply(from: aID, records: feed.records, cursor: feed.next)
            #expect(applied.held == 1)
            await #expect(throws: ServiceError.self) { try await b.store.recipe(third.id) }
            #expect(try await b.store.recipe(fourth.id).name == "Fourth")
            let held = try await b.store.heldRecords()
            #expect(held.map(\.id) == [third.id.uuidString] && held.first?.missingPhotos == [PhotoBlobsProbe.hash(thirdBytes)])
            // The next pull sends the blob the held record waits for, and the record applies.
            _ = try await SyncEngine.pull(from: a, to: b)
            #expect(try await b.store.recipe(third.id).photos.count == 1)
            #expect(try await b.store.heldRecords().isEmpty)
            try await expectSameContent(a, b)
        }
    }

    @Test("a pull cut off after applying a page but before the cursor is saved resumes to the same state")
    func crashBeforeCursor() async throws {
        try await withReplicas(3) { replicas in
            let (source, clean, interrupted) = (replicas[0], replicas[1], replicas[2])
            for index in 0..<25 {
                let (recipe, _) = try await source.store.createRecipe(
                    id: UUID(), RecipeDraft(name: "Recipe \(index)", ingredients: [.init(text: "\(index) eggs")]))
                if index % 5 == 0 { _ = try await source.store.addPhoto(recipeID: recipe.id, bytes: jpegBytes(seed: UInt64(index)), position: nil) }
            }
            _ = try await SyncEngine.pull(from: source, to: clean, pageSize: 10)
            // A page applied without its cursor: the worker died between the two.
            let sourceID = try await source.info().replicaID
            let page = try await source.changes(since: 0, exclude: nil, limit: 10)
            let hashes = page.records.flatMap(\.photoHashes)
            for hash in try await interrupted.missingPhotos(hashes) {
                _ = try await interrupted.putPhoto(sha256: hash, bytes: try await source.photo(sha256: hash))
            }
            _ = try await interrupted.apply(from: sourceID, records: page.records, cursor: nil)
            #expect(try await interrupted.cursor(peer: sourceID).seq == 0)
            // The re-run starts from the saved cursor again; the page applied twice changes nothing the second time.
            let rerun = try await SyncEngine.pull(from: source, to: interrupted, pageSize: 10)
            #expect(rerun.received == 25)
            #expect(rerun.changed == 15)
            try await expectSameContent(interrupted, clean)
            #expect(try await SyncEngine.pull(from: source, to: interrupted).changed == 0)
        }
    }

    @Test("two catalogue entries given the same row id on two replicas both stay on each, with the same ids on both (the name sorting first keeps it)")
    func catalogueRowIDOnTwoReplicas() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let shared = UUID()
            _ = try await a.store.upsertIngredient(id: shared, name: "banana", category: .fruit, aliases: ["plantain"])
            _ = try await b.store.upsertIngredient(id: shared, name: "apple", category: .fruit, aliases: ["pippin"])
            try await syncAll([a, b])
            for replica in [a, b] {
                // Applying banana on b once deleted apple's row (by the id) while apple's record stayed live.
                #expect(try await replica.store.listIngredients(category: .fruit).map(\.name) == ["apple", "banana"], "\(replica.name)")
                #expect(try await replica.store.findIngredient("pippin").name == "apple")
                #expect(try await replica.store.findIngredient("plantain").name == "banana")
            }
            try await expectSameContent(a, b)
            _ = try await a.store.upsertIngredient(id: UUID(), name: "apple", category: .fruit, aliases: ["pippin", "russet"])
            try await syncAll([a, b])
            #expect(try await b.store.findIngredient("russet").name == "apple")
            #expect(try await b.store.findIngredient("plantain").name == "banana")
        }
    }

    @Test("a person's book, recipe or catalogue entry given a sample's id is theirs: written after the samples, it replaces them everywhere")
    func samplesIDsTakenByAPerson() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            _ = try await b.store.loadSamples()
            // The samples' ids (The Wok, the first starter, the first catalogue entry), chosen by a client on a.
            let wok = UUID(uuidString: "5A3B0002-0000-4000-8000-000000000000")!
            let starter = UUID(uuidString: "5A3C0001-0000-4000-8000-000000000000")!
            _ = try await a.store.createBook(id: wok, title: "My wok notes", author: nil)
            _ = try await a.store.createRecipe(id: starter, RecipeDraft(name: "My pasta", ingredients: [.init(text: "200 g linguine")]))
            _ = try await a.store.upsertIngredient(id: UUID(uuidString: "5A3F0001-0000-4000-8000-000000000000")!, name: "linguine", category: .grain, aliases: [])
            try await syncAll([a, b])
            // Written with the samples' own version, they were no newer than the samples: which stayed was a tie's.
            for replica in replicas {
                #expect(try await replica.store.book(wok, limit: 1, after: nil).book.title == "My wok notes", "\(replica.name)")
                #expect(try await replica.store.recipe(starter).name == "My pasta", "\(replica.name)")
                #expect(try await replica.store.findIngredient("linguine").category == .grain, "\(replica.name)")
            }
            try await expectSameContent(a, b)
        }
    }

    @Test("books, catalogue entries and cook-log entries replicate, and a cook-log entry waits for its recipe")
    func otherRecords() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let book = try await a.store.createBook(id: UUID(), title: "Jerusalem", author: "Ottolenghi")
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Shakshuka", bookID: book.id, sourcePageNumber: 12))
            _ = try await a.store.addCookLogEntry(id: UUID(), recipeID: recipe.id, cookedAt: nil, rating: 5, note: "great", servings: 2)
            _ = try await a.store.upsertIngredient(id: UUID(), name: "spring onion", category: nil, aliases: ["scallion"])
            // The recipe changes after the entry, so the feed lists the entry first.
            try await edit(a, recipe.id) { $0.notes = "less cumin" }
            _ = try await a.store.updateBook(id: book.id, title: "Jerusalem (2012)", author: "Ottolenghi")
            try await syncAll([a, b], pageSize: 1)
            #expect(try await b.store.cookLog(recipeID: recipe.id, limit: 10).count == 1)
            #expect(try await b.store.recipe(recipe.id).bookID == book.id)
            #expect(try await b.store.findIngredient("scallions").name == "spring onion")
            try await expectSameContent(a, b)
            try await b.store.deleteBook(id: book.id)
            try await syncAll([a, b])
            #expect(try await a.store.recipe(recipe.id).bookID == nil)
            try await expectSameContent(a, b)
        }
    }
}
