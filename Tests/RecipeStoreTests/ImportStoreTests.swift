import Foundation
import RecipeModel
import RecipeProtocol
import Testing
@testable import RecipeStore

@Suite("Imported recipes and import jobs in the store")
struct ImportStoreTests {
    @Test("a job keeps the first result of each URL, drops blank and repeated URLs, and reports its state")
    func jobs() async throws {
        try await withStore { store async throws in
            let job = try await store.createJob(id: UUID(), urls: ["https://a.example/1", " ", "https://a.example/1", "https://b.example/2"])
            #expect(job.total == 2 && job.state == .queued && job.items?.map(\.url) == ["https://a.example/1", "https://b.example/2"])
            #expect(try await store.jobs(unfinished: true, limit: 10).map(\.id) == [job.id])

            let first = ImportJob.Item(position: 0, url: "https://a.example/1", state: .imported, outcome: .created, recipeName: "One")
            let running = try await store.recordJobItem(jobID: job.id, position: 0, result: first)
            #expect(running.state == .running && running.imported == 1 && running.pending == 1)
            // A second result for the same URL (a restarted worker) changes nothing.
            var again = first
            again.state = .failed
            again.error = ServiceError(.fetchFailed, "late")
            #expect(try await store.recordJobItem(jobID: job.id, position: 0, result: again).failed == 0)

            var second = ImportJob.Item(position: 1, url: "https://b.example/2", state: .failed)
            second.error = ServiceError(.noRecipeFound, "no recipe")
            let done = try await store.recordJobItem(jobID: job.id, position: 1, result: second)
            #expect(done.state == .done && done.imported == 1 && done.failed == 1)
            #expect(try await store.job(job.id).items?[1].error == ServiceError(.noRecipeFound, "no recipe"))
            #expect(try await store.jobs(unfinished: true, limit: 10).isEmpty)
            await #expect(throws: ServiceError.self) { try await store.recordJobItem(jobID: job.id, position: 7, result: first) }
            await #expect(throws: ServiceError.self) { try await store.createJob(id: UUID(), urls: ["", "  "]) }
        }
    }

    @Test("saving an imported page again updates its recipe and keeps the user's fields")
    func saveImported() async throws {
        try await withStore { store async throws in
            let page = "https://e.example/soup"
            var draft = RecipeDraft(name: "Soup", ingredients: [.init(text: "2 leeks")], website: page, sourceType: .url, origin: .imported)
            let (created, outcome) = try await store.saveImported(id: UUID(), draft, sameAs: [page])
            #expect(outcome == .created)
            _ = try await store.rate(id: created.id, 4)
            var mine = RecipeDraft(try await store.recipe(created.id))
            mine.notes = "less salt"
            _ = try await store.updateRecipe(id: created.id, expectedVersion: 2, mine)

            #expect(try await store.saveImported(id: UUID(), draft, sameAs: [page]).outcome == .unchanged)
            draft.ingredients = [.init(text: "3 leeks")]
            let (updated, second) = try await store.saveImported(id: UUID(), draft, sameAs: [page + "?utm_source=x", page])
            #expect(second == .updated && updated.id == created.id)
            #expect(updated.notes == "less salt" && updated.rating == 4 && updated.ingredients.map(\.text) == ["3 leeks"])
            #expect(try await store.stats().recipes == 1)
        }
    }

    @Test("saving a page again never overwrites a recipe of the person's own with that address: a duplicate, or one they typed")
    func saveImportedLeavesOwnRecipes() async throws {
        try await withStore { store async throws in
            let page = "https://e.example/lasagna"
            let draft = RecipeDraft(name: "Lasagna", ingredients: [.init(text: "9 sheets pasta")], website: page, sourceType: .url, origin: .imported)
            let (imported, _) = try await store.saveImported(id: UUID(), draft, sameAs: [page])
            // The person makes it their own (the copy keeps the address it came from), changes it, and deletes the original.
            let copyID = UUID()
            var mine = RecipeDraft(try await store.duplicateRecipe(id: imported.id, newID: copyID, name: "My lasagna"))
            mine.ingredients = [.init(text: "12 sheets pasta")]
            _ = try await store.updateRecipe(id: copyID, expectedVersion: 1, mine)
            _ = try await store.deleteRecipe(id: imported.id)
            let typed = try await store.createRecipe(id: UUID(), RecipeDraft(name: "Nonna's lasagna", website: page)).recipe

            let (again, outcome) = try await store.saveImported(id: UUID(), draft, sameAs: [page])
            #expect(outcome == .created && again.id != copyID && again.id != typed.id)
            #expect(try await store.recipe(copyID).name == "My lasagna")
            #expect(try await store.recipe(copyID).ingredients.map(\.text) == ["12 sheets pasta"])
            #expect(try await store.recipe(typed.id).name == "Nonna's lasagna")
            // The page imported again now updates the recipe it made.
            #expect(try await store.saveImported(id: UUID(), draft, sameAs: [page]).recipe.id == again.id)
        }
    }
}
