import Foundation
import RecipeModel
import RecipeProtocol
@testable import RecipeStore
import Testing
import TestThreads

/// Lists that grow with the collection come a page at a time, so no reply passes the 16 MiB one may carry however
/// many books or catalogue entries there are.
@Suite("Books and the catalogue, a page at a time")
struct ListPageTests {
    @Test("books: pages of every size give every book once, by title in any case, namesakes by id; only the last page ends")
    func bookPages() async throws {
        try await withStore { store async throws in
            // Titles that differ only in case, namesakes, and a title with the page mark's separator in it.
            let titles = ["bread", "Bread", "Bread", "apple pie: the book", "Zucchini", "Étoile", "cakes", "CAKES", "a", "b:c"]
            for title in titles { _ = try await store.createBook(id: UUID(), title: title, author: nil) }
            let all = try await store.bookPage(limit: nil, after: nil)
            #expect(all.next == nil && all.books.count == titles.count)
            #expect(all.books.map { $0.book.title.lowercased() } == all.books.map { $0.book.title.lowercased() }.sorted(), "by title, in any case")
            for limit in [1, 2, 3, 4, 9, 10, 11] {
                let pages = try await everyPage { after in
                    let page = try await store.bookPage(limit: limit, after: after)
                    return (page.books, page.next)
                }
                #expect(pages.flatMap { $0 } == all.books, "limit \(limit)")
                #expect(pages.dropLast().allSatisfy { $0.count == limit } && pages.last?.isEmpty == false, "limit \(limit)")
            }
            #expect(try await store.listBooks() == all.books)
        }
    }

    @Test("books added, renamed and deleted between pages: no book that stayed unchanged is left out")
    func booksChangedBetweenPages() async throws {
        try await withStore { store async throws in
            var ids: [UUID] = []
            for index in 0..<20 { ids.append(try await store.createBook(id: UUID(), title: String(format: "Book %02d", index), author: nil).id) }
            let first = try await store.bookPage(limit: 5, after: nil)
            // The last book of the first page deleted (the mark points at nothing), one ahead renamed behind the
            // mark, one added ahead of it.
            _ = try await store.deleteBook(id: ids[4])
            _ = try await store.updateBook(id: ids[12], title: "Book 00 again", author: nil)
            _ = try await store.createBook(id: UUID(), title: "Book 15½", author: nil)
            var seen = first.books.map(\.book.title)
            var after = first.next
            for _ in 0..<100 {
                guard let mark = after else { break }
                let page = try await store.bookPage(limit: 5, after: mark)
                seen += page.books.map(\.book.title)
                after = page.next
            }
            let unchanged = (0..<20).filter { $0 != 4 && $0 != 12 }.map { String(format: "Book %02d", $0) }
            #expect(Set(unchanged).isSubset(of: Set(seen)), "\(seen)")
            #expect(seen.contains("Book 15½") && !seen.contains("Book 00 again"), "added ahead is listed; renamed behind the mark is not")
        }
    }

    @Test("the catalogue: pages of every size, with and without a category, give every entry once by name")
    func cataloguePages() async throws {
        try await withStore { store async throws in
            _ = try await store.loadSamples()
            for category in [nil, IngredientCategory.herb, .vegetable] {
                let all = try await store.ingredientPage(category: category, limit: nil, after: nil)
                #expect(all.next == nil && !all.ingredients.isEmpty)
                #expect(all.ingredients.map(\.name) == all.ingredients.map(\.name).sorted())
                #expect(category == nil || all.ingredients.allSatisfy { $0.category == category })
                for limit in [1, 2, 7] {
                    let pages = try await everyPage { after in
                        let page = try await store.ingredientPage(category: category, limit: limit, after: after)
                        return (page.ingredients, page.next)
                    }
                    #expect(pages.flatMap { $0 } == all.ingredients, "\(String(describing: category)), limit \(limit)")
                }
                #expect(try await store.listIngredients(category: category) == all.ingredients)
            }
        }
    }

    @Test("the cook log: pages of every size give every entry once, newest first and entries of one moment by id, for one recipe or all")
    func cookLogPages() async throws {
        try await withStore { store async throws in
            let soup = try await store.createRecipe(id: UUID(), RecipeDraft(name: "Soup")).recipe.id
            let bread = try await store.createRecipe(id: UUID(), RecipeDraft(name: "Bread")).recipe.id
            let base = Date(timeIntervalSince1970: 1_750_000_000)
            // Three moments with several entries each (a tie is broken by id), both recipes at each.
            for index in 0..<12 {
                _ = try await store.addCookLogEntry(id: UUID(), recipeID: index % 2 == 0 ? soup : bread, cookedAt: base + Double(index % 3) * 86_400,
                                                    rating: nil, note: "entry \(index)", servings: nil)
            }
            for recipe in [nil, soup, bread] {
                let all = try await store.cookLogPage(recipeID: recipe, limit: 1_000, after: nil)
                #expect(all.next == nil && all.entries.count == (recipe == nil ? 12 : 6))
                let order = all.entries.map { ($0.cookedAt, $0.id.uuidString) }
                #expect(zip(order, order.dropFirst()).allSatisfy { $0.0 > $1.0 || ($0.0 == $1.0 && $0.1 < $1.1) }, "newest first, then by id")
                for limit in [1, 2, 5, 6] {
                    let pages = try await everyPage { after in
                        let page = try await store.cookLogPage(recipeID: recipe, limit: limit, after: after)
                        return (page.entries, page.next)
                    }
                    #expect(pages.flatMap { $0 } == all.entries, "\(String(describing: recipe)), limit \(limit)")
                    #expect(pages.last?.isEmpty == false)
                }
            }
            let refused = await #expect(throws: ServiceError.self) { _ = try await store.cookLogPage(recipeID: nil, limit: 10, after: "nothing") }
            #expect(refused?.message == "after \"nothing\" is not a page mark cooklog.list gave; give the next of the page before, or leave it out for the first page")
            let tooMany = await #expect(throws: ServiceError.self) { _ = try await store.cookLogPage(recipeID: nil, limit: 1_001, after: nil) }
            #expect(tooMany?.message == "limit is 1001; it must be 1 to 1000")
        }
    }

    @Test("a page ends early once its items' bytes pass 2 MiB, and the pages still give every item once: the cook log and the catalogue")
    func pagesBoundedInBytes() async throws {
        try await withStore { store async throws in
            // Cook-log notes of 20,000 four-byte characters (80 KB): 1,000 of them, a page `recipes log --all` asks
            // for, made 80 MB (and, before texts were held to four bytes a character, over a gigabyte).
            let soup = try await store.createRecipe(id: UUID(), RecipeDraft(name: "Soup")).recipe.id
            for index in 0..<60 {
                _ = try await store.addCookLogEntry(id: UUID(), recipeID: soup, cookedAt: Date(timeIntervalSince1970: 1_750_000_000 + Double(index)),
                                                    rating: nil, note: String(format: "%02d ", index) + String(repeating: "🍅", count: 19_990), servings: nil)
            }
            let encoder = WireJSONEncoder()
            let logPages = try await everyPage { after in
                let page = try await store.cookLogPage(recipeID: nil, limit: 1_000, after: after)
                #expect(try encoder.encode(page).count < 4 * 1_048_576)
                return (page.entries, page.next)
            }
            #expect(logPages.count == 3 && logPages.dropLast().allSatisfy { (20...26).contains($0.count) }, "\(logPages.map(\.count))")
            #expect(logPages.flatMap { $0 }.map { $0.note?.prefix(2) } == (0..<60).reversed().map { String(format: "%02d", $0)[...] })

            // Catalogue entries of 50 aliases of 100 four-byte characters (20 KB each): about a hundred to a page.
            for index in 0..<150 {
                let aliases = (0..<50).map { String(format: "%03d%02d ", index, $0) + String(repeating: "🧅", count: 94) }
                _ = try await store.upsertIngredient(id: UUID(), name: String(format: "food %03d", index), category: nil, aliases: aliases)
            }
            let cataloguePages = try await everyPage { after in
                let page = try await store.ingredientPage(category: nil, limit: IngredientOps.List.maxLimit, after: after)
                #expect(try encoder.encode(page).count < 4 * 1_048_576)
                return (page.ingredients, page.next)
            }
            #expect(cataloguePages.count == 2, "\(cataloguePages.map(\.count))")
            #expect(cataloguePages.flatMap { $0 }.map(\.name) == (0..<150).map { String(format: "food %03d", $0) })
            #expect(try await store.ingredientPage(category: nil, limit: nil, after: nil).ingredients.count == 150, "without a limit, every one in one reply, as before")
        }
    }

    @Test("a book's recipes: pages of every size give every recipe once, by page number (none last), then name in any case and id")
    func bookRecipePages() async throws {
        try await withStore { store async throws in
            let book = try await store.createBook(id: UUID(), title: "Family recipes", author: nil).id
            let recipes: [(String, Int?)] = [("Soup", 3), ("bread", nil), ("Bread", nil), ("Apple pie: the best", 1), ("apple pie: the best", 1),
                                             ("Zucchini", 1), ("Bread", 12), ("Étoile", nil), ("cake", 3), ("Cake", 3), ("a:b:c", 100_000)]
            for (name, page) in recipes {
                _ = try await store.createRecipe(id: UUID(), RecipeDraft(name: name, bookID: book, sourcePageNumber: page))
            }
            _ = try await store.createRecipe(id: UUID(), RecipeDraft(name: "Not in the book", sourcePageNumber: 1))
            let all = try await store.book(book)
            #expect(all.next == nil && all.recipes.count == recipes.count && all.recipeCount == recipes.count)
            #expect(all.recipes.prefix(3).map(\.name).sorted() == ["Apple pie: the best", "Zucchini", "apple pie: the best"], "page 1 first")
            #expect(all.recipes.suffix(3).map(\.name).sorted() == ["Bread", "bread", "Étoile"], "no page number last")
            for limit in [1, 2, 3, 5, 10, 11] {
                let pages = try await everyPage { after in
                    let page = try await store.book(book, limit: limit, after: after)
                    #expect(page.recipeCount == recipes.count && page.book.title == "Family recipes")
                    return (page.recipes, page.next)
                }
                #expect(pages.flatMap { $0 } == all.recipes, "limit \(limit)")
                #expect(pages.dropLast().allSatisfy { $0.count == limit } && pages.last?.isEmpty == false, "limit \(limit)")
            }
            let alone = try await store.book(book, limit: 0)
            #expect(alone.recipes.isEmpty && alone.next == nil && alone.recipeCount == recipes.count)
            // A recipe moved out of the book after the mark was given: the pages after it go on.
            let first = try await store.book(book, limit: 4)
            _ = try await store.deleteRecipe(id: first.recipes[3].id)
            let rest = try await store.book(book, limit: 200, after: first.next)
            #expect(rest.recipes == Array(all.recipes.dropFirst(4)) && rest.next == nil)
            for mark in ["", "id-only", "\(UUID().uuidString):not-a-page:bread", "\(UUID().uuidString):7"] {
                let refused = await #expect(throws: ServiceError.self) { _ = try await store.book(book, limit: 5, after: mark) }
                #expect(refused?.code == .invalidArgument)
                #expect(refused?.message == "after \"\(mark.prefix(80))\" is not a page mark book.get gave; give the next of the page before, or leave it out for the first page")
            }
        }
    }

    @Test("every item at once is refused once the items pass what one reply may carry, early and saying to ask in pages; the pages give them all")
    func wholeListsBounded() async throws {
        try await withStore { store async throws in
            let encoder = WireJSONEncoder()
            // 2,100 recipes whose category and cuisine are 1,000 four-byte characters each (about 8 KB a summary, 17 MB
            // in all), and 11,000 books of 800-byte titles and authors (19 MB): written straight into the tables, as
            // many requests over time would.
            let book = try await store.createBook(id: UUID(), title: "Everything", author: nil).id
            let heavy = String(repeating: "🌶", count: 1_000)
            try await store.pool.write { db in
                for index in 0..<2_100 {
                    try db.execute(sql: """
                        INSERT INTO recipes (id, title, createdAt, updatedAt, version, origin, bookId, recipeCategory, recipeCuisine)
                        VALUES (?, ?, '2026-01-01 00:00:00.000', '2026-01-01 00:00:00.000', 1, 'custom', ?, ?, ?)
                        """, arguments: [UUID().databaseText, String(format: "Recipe %04d", index), book.databaseText, heavy, heavy])
                }
                let title = String(repeating: "📚", count: 200)
                for index in 0..<11_000 {
                    try db.execute(sql: "INSERT INTO books (id, title, author, createdAt, updatedAt) VALUES (?, ?, ?, '2026-01-01 00:00:00.000', '2026-01-01 00:00:00.000')",
                                   arguments: [UUID().databaseText, String(format: "%05d", index) + title.dropFirst(2), title])
                }
            }
            let recipes = await #expect(throws: ServiceError.self) { _ = try await store.book(book) }
            #expect(recipes?.code == .messageTooLarge)
            #expect(recipes?.message == "every recipe of the book in one reply would pass the 16 MiB one reply may carry; ask book.get for pages: a limit of 1 to 200, then the next each page gives")
            let pages = try await everyPage { after in
                let page = try await store.book(book, limit: RecipeListQuery.maxLimit, after: after)
                #expect(try encoder.encode(page).count < 4 * 1_048_576)
                return (page.recipes, page.next)
            }
            #expect(pages.flatMap { $0 }.map(\.name) == (0..<2_100).map { String(format: "Recipe %04d", $0) })

            let books = await #expect(throws: ServiceError.self) { _ = try await store.bookPage(limit: nil, after: nil) }
            #expect(books?.code == .messageTooLarge)
            #expect(books?.message == "every book in one reply would pass the 16 MiB one reply may carry; ask book.list for pages: a limit of 1 to 1000, then the next each page gives")
            let bookPages = try await everyPage { after in
                let page = try await store.bookPage(limit: BookOps.List.maxLimit, after: after)
                return (page.books, page.next)
            }
            #expect(bookPages.flatMap { $0 }.count == 11_001)
        }
    }

    @Test("a limit out of range or a page mark the list did not give is refused, saying what it takes")
    func badRequests() async throws {
        try await withStore { store async throws in
            for limit in [0, -3, BookOps.List.maxLimit + 1] {
                let error = await #expect(throws: ServiceError.self) { _ = try await store.bookPage(limit: limit, after: nil) }
                #expect(error?.code == .invalidArgument && error?.message == "limit is \(limit); it must be 1 to \(BookOps.List.maxLimit), or left out for every one")
            }
            let tooMany = await #expect(throws: ServiceError.self) {
                _ = try await store.ingredientPage(category: nil, limit: IngredientOps.List.maxLimit + 1, after: nil)
            }
            #expect(tooMany?.message == "limit is \(IngredientOps.List.maxLimit + 1); it must be 1 to \(IngredientOps.List.maxLimit), or left out for every one")
            for mark in ["", "no separator", ":starts with it", String(repeating: "x", count: 40_000) + ":y"] {
                let books = await #expect(throws: ServiceError.self) { _ = try await store.bookPage(limit: nil, after: mark) }
                #expect(books?.code == .invalidArgument)
                #expect(books?.message == "after \"\(mark.prefix(80))\" is not a page mark book.list gave; give the next of the page before, or leave it out for the first page")
                let entries = await #expect(throws: ServiceError.self) { _ = try await store.ingredientPage(category: nil, limit: nil, after: mark) }
                #expect(entries?.message.contains("is not a page mark ingredient.list gave") == true)
            }
        }
    }
}
