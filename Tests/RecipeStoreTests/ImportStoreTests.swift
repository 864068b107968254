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

    @Test("what a worker says of a URL is kept to a bounded size, a URL of many-byte characters is refused, and a job's pages end by size")
    func jobItemSizes() async throws {
        try await withStore { store async throws in
            let heavy = String(repeating: "e" + String(repeating: "\u{301}", count: 30), count: 2_000) // 122 KB
            let refused = await #expect(throws: ServiceError.self) { _ = try await store.createJob(id: UUID(), urls: ["https://a.example/" + heavy]) }
            #expect(refused?.message == "URL 1 is 122018 bytes of UTF-8; the most allowed is 8192")
            // A migration's names and reasons the same way.
            for plan in [MigrationPlan(format: .paprika, source: heavy, entries: [.init(label: "a")]),
                         MigrationPlan(format: .paprika, source: "export", entries: [.init(label: heavy)]),
                         MigrationPlan(format: .paprika, source: "export", entries: [.init(label: "a", refusal: heavy)])] {
                let error = await #expect(throws: ServiceError.self) { _ = try await store.createMigration(id: UUID(), plan: plan) }
                #expect(error?.message.contains("bytes of UTF-8") == true, "\(error?.message ?? "")")
            }
            // A job's items were kept whole: 1,000 failures of a 15 MB message each made every page of it, and the job
            // itself, a reply of gigabytes.
            let urls = (0..<150).map { "https://a.example/\($0)/" + String(repeating: "p", count: 2_000) }
            let job = try await store.createJob(id: UUID(), urls: urls)
            for position in urls.indices {
                var result = ImportJob.Item(position: position, url: urls[position], state: .failed, recipeName: heavy, photoNote: heavy)
                result.error = ServiceError(.noRecipeFound, position == 0 ? String(repeating: "m", count: 3_000_000) : heavy)
                _ = try await store.recordJobItem(jobID: job.id, position: position, result: result)
            }
            let first = try #require(try await store.job(job.id).items?.first)
            #expect(first.error?.message.count == ImportJob.Item.maxNoteLength && first.error?.message.hasSuffix("m…") == true)
            #expect((first.recipeName?.utf8.count ?? .max) <= 4 * RecipeDraft.Limits.nameLength && first.recipeName?.hasSuffix("…") == true)
            let second = try #require(try await store.job(job.id).items?[1])
            #expect((second.error?.message.utf8.count ?? .max) <= 4 * ImportJob.Item.maxNoteLength && second.photoNote?.hasSuffix("…") == true)
            let encoder = WireJSONEncoder()
            var seen: [Int] = []
            var from = 0, pages = 0
            for _ in 0..<20 {
                let page = try await store.jobItems(jobID: job.id, view: .all, from: from, limit: JobOps.Items.maxLimit)
                #expect(try encoder.encode(page).count < 4 * 1_048_576)
                seen += page.items.map(\.position)
                pages += 1
                from = page.next
                if !page.more { break }
            }
            #expect(seen == Array(urls.indices) && pages > 1, "\(pages) pages")
        }
    }

    @Test("job.items: every item or the pending ones by position, the finished ones in the order they finished, a page at a time")
    func jobItemPages() async throws {
        try await withStore { store async throws in
            let urls = (0..<5).map { "https://a.example/\($0)" }
            let job = try await store.createJob(id: UUID(), urls: urls)
            func finish(_ position: Int) async throws {
                _ = try await store.recordJobItem(jobID: job.id, position: position,
                                                  result: .init(position: position, url: urls[position], state: .imported, outcome: .created))
            }
            let none = try await store.jobItems(jobID: job.id, view: .finished, from: 0, limit: 10)
            #expect(none.items.isEmpty && none.next == 0 && !none.more && none.job.state == .queued && none.job.items == nil)
            for position in [3, 0, 4] { try await finish(position) }
            // Finished: in the order they finished, from a cursor that carries on where the last page stopped.
            let first = try await store.jobItems(jobID: job.id, view: .finished, from: 0, limit: 2)
            #expect(first.items.map(\.position) == [3, 0] && first.more && first.job.imported == 3)
            let second = try await store.jobItems(jobID: job.id, view: .finished, from: first.next, limit: 2)
            #expect(second.items.map(\.position) == [4] && !second.more)
            let idle = try await store.jobItems(jobID: job.id, view: .finished, from: second.next, limit: 2)
            #expect(idle.items.isEmpty && idle.next == second.next && !idle.more)
            try await finish(1)
            #expect(try await store.jobItems(jobID: job.id, view: .finished, from: idle.next, limit: 2).items.map(\.position) == [1],
                    "what finishes later is found from the same cursor")
            // A URL given up after two begun tries finishes too, and takes the next number.
            #expect(try await store.startJobItem(jobID: job.id, position: 2))
            #expect(try await store.startJobItem(jobID: job.id, position: 2))
            #expect(try await store.startJobItem(jobID: job.id, position: 2) == false)
            let givenUp = try await store.jobItems(jobID: job.id, view: .finished, from: idle.next + 1, limit: 2)
            #expect(givenUp.items.map(\.position) == [2] && givenUp.items.first?.state == .failed && givenUp.job.state == .done)

            // All and pending: by position.
            let all = try await store.jobItems(jobID: job.id, view: .all, from: 0, limit: 3)
            #expect(all.items.map(\.position) == [0, 1, 2] && all.next == 3 && all.more)
            let rest = try await store.jobItems(jobID: job.id, view: .all, from: all.next, limit: 3)
            #expect(rest.items.map(\.position) == [3, 4] && !rest.more)
            let other = try await store.createJob(id: UUID(), urls: urls)
            _ = try await store.recordJobItem(jobID: other.id, position: 1, result: .init(position: 1, url: urls[1], state: .failed,
                                                                                      error: ServiceError(.fetchFailed, "gone")))
            let pending = try await store.jobItems(jobID: other.id, view: .pending, from: 0, limit: 2)
            #expect(pending.items.map(\.position) == [0, 2] && pending.more && pending.items.allSatisfy { $0.state == .pending })
            #expect(try await store.jobItems(jobID: other.id, view: .pending, from: pending.next, limit: 2).items.map(\.position) == [3, 4])
            #expect(try await store.jobItems(jobID: other.id, view: .finished, from: 0, limit: 9).items.first?.error?.message == "gone",
                    "each job numbers its own")

            // The counts kept with each job are those of its items.
            for id in [job.id, other.id] {
                let items = try await store.jobItems(jobID: id, view: .all, from: 0, limit: 10)
                #expect(items.job.total == items.items.count && items.job.imported == items.items.count { $0.state == .imported }
                        && items.job.failed == items.items.count { $0.state == .failed })
            }
            #expect(try await store.jobs(unfinished: true, limit: 10).map(\.id) == [other.id])

            for (limit, from) in [(0, 0), (1_001, 0), (10, -1)] {
                await #expect(throws: ServiceError.self) { try await store.jobItems(jobID: job.id, view: .all, from: from, limit: limit) }
            }
            await #expect(throws: ServiceError(.notFound, "no import job has id \(UUID(uuidString: "00000000-0000-4000-8000-000000000000")!.uuidString); `recipes jobs` lists them")) {
                try await store.jobItems(jobID: UUID(uuidString: "00000000-0000-4000-8000-000000000000")!, view: .all, from: 0, limit: 10)
            }
        }
    }

    @Test("a migration's entries refused by the sender are finished from the start, in order; its creation replies without items")
    func migrationRefusalsFinishFirst() async throws {
        try await withStore { store async throws in
            let id = UUID()
            try await store.stageJobEntry(jobID: id, position: 1, bytes: Data("entry".utf8))
            let plan = MigrationPlan(format: .paprika, source: "export", entries: [
                .init(label: "a", refusal: "damaged"), .init(label: "b"), .init(label: "c", refusal: "too large")])
            let created = try await store.createMigration(id: id, plan: plan)
            #expect(created.items == nil && created.total == 3 && created.failed == 2)
            let finished = try await store.jobItems(jobID: id, view: .finished, from: 0, limit: 10)
            #expect(finished.items.map(\.position) == [0, 2] && finished.next == 3)
            #expect(try await store.jobItems(jobID: id, view: .pending, from: 0, limit: 10).items.map(\.url) == ["b"])
            _ = try await store.recordJobItem(jobID: id, position: 1, result: .init(position: 1, url: "b", state: .imported, outcome: .created))
            #expect(try await store.jobItems(jobID: id, view: .finished, from: finished.next, limit: 10).items.map(\.position) == [1])
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
