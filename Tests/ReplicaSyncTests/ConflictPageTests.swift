import Foundation
import RecipeModel
import RecipeProtocol
import RecipeStore
import ReplicaSync
import Testing
import TestThreads

/// `conflicts.list` a page at a time: a kept value may be 20,000 characters, so every conflict in one reply could pass
/// the 16 MiB a reply may carry, and a person with many could list none.
@Suite("Conflicts, a page at a time")
struct ConflictPageTests {
    /// Two replicas with conflicts on books (two kept values on each book: the record holds several) and conflicted
    /// copies of recipes.
    static func withConflicts(books: Int, recipes: Int, _ body: (LocalReplica, [UUID]) async throws -> Void) async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            var bookIDs: [UUID] = []
            for index in 0..<books {
                bookIDs.append(try await a.store.createBook(id: UUID(), title: "Book \(index)", author: nil).id)
            }
            var recipeIDs: [UUID] = []
            for index in 0..<recipes {
                recipeIDs.append(try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Recipe \(index)")).recipe.id)
            }
            try await syncAll([a, b])
            for round in 0..<2 {
                for (index, id) in bookIDs.enumerated() {
                    _ = try await a.store.updateBook(id: id, title: "Book \(index) on a, \(round)", author: nil)
                    _ = try await b.store.updateBook(id: id, title: "Book \(index) on b, \(round)", author: nil)
                }
                try await syncAll([a, b])
            }
            for id in recipeIDs {
                for (replica, name) in [(a, "a"), (b, "b")] {
                    let current = try await replica.store.recipe(id)
                    var draft = RecipeDraft(current)
                    draft.notes = "edited on \(name)"
                    _ = try await replica.store.updateRecipe(id: id, expectedVersion: current.version, draft)
                }
            }
            try await syncAll([a, b])
            try await body(a, bookIDs)
        }
    }

    @Test("pages of every size list every conflict once, in feed order, and only the last says there is no more")
    func pagesListEveryConflictOnce() async throws {
        try await Self.withConflicts(books: 7, recipes: 5) { a, _ in
            let all = try await a.store.conflicts()
            #expect(all.count == 7 * 2 + 5, "two kept titles on each book and a copy of each recipe")
            for limit in [1, 2, 3, 5, 18, 19, 20, 100] {
                let pages = try await everyPage { after in
                    let page = try await a.store.conflicts(limit: limit, after: after)
                    return (page.conflicts, page.next)
                }
                #expect(pages.flatMap { $0 } == all, "limit \(limit)")
                #expect(pages.dropLast().allSatisfy { $0.count == limit }, "limit \(limit)")
                #expect(pages.last?.isEmpty == false, "limit \(limit): no empty last page")
            }
            // Left out: every one, in one reply, as before the list came in pages.
            let unlimited = try await a.store.conflicts(limit: nil, after: nil)
            #expect(unlimited.conflicts == all && unlimited.next == nil)
        }
    }

    @Test("a conflict resolved between pages, on a record the pages have passed or not: nothing else is left out")
    func changesBetweenPages() async throws {
        try await Self.withConflicts(books: 4, recipes: 3) { a, _ in
            let all = try await a.store.conflicts()
            let first = try await a.store.conflicts(limit: 3, after: nil)
            // One of the first page's book conflicts resolved (its record moves on in the feed, with its other
            // conflict), and one that no page has reached yet.
            let passed = try #require(first.conflicts.first { $0.kind == .book })
            let ahead = try #require(all.last { $0.kind == .book && $0.recordID != passed.recordID })
            _ = try await a.store.resolveConflict(id: passed.id)
            _ = try await a.store.dismissConflict(id: ahead.id)
            var seen = first.conflicts
            var after = first.next
            for _ in 0..<100 {
                guard let mark = after else { break }
                let page = try await a.store.conflicts(limit: 3, after: mark)
                seen += page.conflicts
                after = page.next
            }
            let open = try await a.store.conflicts()
            #expect(Set(open.map(\.id)).isSubset(of: Set(seen.map(\.id))), "every open conflict was listed")
            #expect(!seen.dropFirst(first.conflicts.count).contains { $0.id == ahead.id }, "the dismissed one was not")
        }
    }

    @Test("a limit out of range or a page mark conflicts.list did not give is refused, saying what it takes")
    func badRequests() async throws {
        try await withReplicas(1) { replicas in
            let store = replicas[0].store
            for limit in [0, -1, ConflictOps.List.maxLimit + 1] {
                let error = await #expect(throws: ServiceError.self) { _ = try await store.conflicts(limit: limit, after: nil) }
                #expect(error?.code == .invalidArgument)
                #expect(error?.message == "limit is \(limit); it must be 1 to \(ConflictOps.List.maxLimit), or left out for every one")
            }
            for mark in ["", "12", ":12", "ABC:x", "ABC:-1", "ABC:", "ABC:" + String(repeating: "9", count: 40)] {
                let error = await #expect(throws: ServiceError.self) { _ = try await store.conflicts(limit: nil, after: mark) }
                #expect(error?.code == .invalidArgument)
                #expect(error?.message.hasSuffix("is not a page mark conflicts.list gave; give the next of the page before, or leave it out for the first page") == true,
                        "\(error?.message ?? "")")
            }
            // A well-formed mark past the end is an empty last page.
            let past = try await store.conflicts(limit: 5, after: "ZZZ:999999")
            #expect(past.conflicts.isEmpty && past.next == nil)
        }
    }
}
