import Foundation
import GRDB
import RecipeModel
import RecipeProtocol
import Testing
import TestRandom
@testable import RecipeStore

@Suite("Lists, search, books, catalogue and samples")
struct QueryTests {
    @Test("the samples match seed 004 and load only once")
    func samples() async throws {
        try await withStore { store async throws in
            let first = try await store.loadSamples()
            #expect(first == SampleLoadResult(loaded: true, books: 3, recipes: 8, ingredients: 43))
            let again = try await store.loadSamples()
            #expect(!again.loaded)
            let stats = try await store.stats()
            #expect(stats.recipes == 8 && stats.starters == 8 && stats.books == 3 && stats.ingredients == 43)
            for sample in SampleData.recipes {
                let recipe = try await store.recipe(SampleData.recipeID(sample.number))
                #expect(recipe.ingredients.map(\.food) == sample.foods, "\(recipe.name)")
                #expect(recipe.origin == .starter)
                for food in sample.foods {
                    #expect(try await store.findIngredient(food).name == food)
                }
            }
            let pasta = try await store.recipe(SampleData.recipeID(1))
            #expect(pasta.bookID == SampleData.saltFatAcidHeat && pasta.sourcePageNumber == 234 && pasta.recipeCuisine == "Italian")
            #expect(pasta.prepTime == "PT10M")
        }
    }

    @Test("the samples load beside catalogue entries a person made first with a sample's id or one of its aliases, which stay theirs")
    func samplesBesidePeoplesEntries() async throws {
        try await withStore { store async throws in
            // The first sample entry's id (spaghetti's), and an alias of olive oil's, taken before the samples load; and
            // the first starter's id, by a recipe of a person's (it said the samples were loaded already).
            let mine = try await store.upsertIngredient(id: SampleData.id("5A3F", 1), name: "linguine", category: .grain, aliases: ["extra virgin olive oil"])
            _ = try await store.createRecipe(id: SampleData.recipeID(1), RecipeDraft(name: "My pasta"))
            let loaded = try await store.loadSamples()
            #expect(loaded.loaded)
            #expect(try await store.stats().ingredients == 44)
            #expect(try await store.stats().starters == 7)
            #expect(try await store.recipe(SampleData.recipeID(1)).name == "My pasta")
            let again = try await store.loadSamples()
            #expect(!again.loaded)
            #expect(try await store.findIngredient("basil").createdAt == SampleData.createdAt)
            let linguine = try await store.findIngredient("linguine")
            #expect(linguine == mine, "\(linguine) \(mine)")
            #expect(try await store.findIngredient("extra virgin olive oil").name == "linguine")
            let spaghetti = try await store.findIngredient("spaghetti")
            #expect(spaghetti.id != mine.id)
            #expect(try await store.findIngredient("olive oil").aliases.isEmpty)
        }
    }

    @Test("lists filter, sort and page with a cursor that visits every recipe once")
    func listing() async throws {
        try await withStore { store async throws in
            _ = try await store.loadSamples()
            #expect(try await store.listRecipes(RecipeListQuery(cuisine: "asian")).recipes.map(\.name) == ["Chicken Stir-Fry", "Egg Fried Rice"])
            #expect(try await store.listRecipes(RecipeListQuery(category: "Dinner")).recipes.count == 4)
            #expect(try await store.listRecipes(RecipeListQuery(bookID: SampleData.theWok)).recipes.count == 2)
            #expect(try await store.listRecipes(RecipeListQuery(origin: .custom)).recipes.isEmpty)
            let pastaID = SampleData.recipeID(1).uuidString
            #expect(try await store.listRecipes(RecipeListQuery(idPrefix: "5a3c")).recipes.count == 8, "the sample recipe ids start alike")
            #expect(try await store.listRecipes(RecipeListQuery(idPrefix: String(pastaID.prefix(8)).lowercased())).recipes.map(\.name)
                    == ["Classic Tomato Pasta"], "the short id a table shows finds one recipe")
            let badPrefix = await #expect(throws: ServiceError.self) { _ = try await store.listRecipes(RecipeListQuery(idPrefix: "xyz")) }
            #expect(badPrefix?.code == .invalidArgument)
            // The end of an id: what the CLI's tables show.
            #expect(try await store.listRecipes(RecipeListQuery(idSuffix: "00000000")).recipes.count == 8, "the starters' ids end alike")
            #expect(try await store.listRecipes(RecipeListQuery(idSuffix: pastaID)).recipes.count == 1, "a whole id is its own end")
            let mine = try await store.createRecipe(id: .timeOrdered(), RecipeDraft(name: "Mine")).recipe.id
            #expect(try await store.listRecipes(RecipeListQuery(idSuffix: mine.shortText)).recipes.map(\.name) == ["Mine"])
            _ = try await store.deleteRecipe(id: mine)
            #expect(try await store.listRecipes(RecipeListQuery(idSuffix: "ffffffffffff")).recipes.isEmpty)
            let badSuffix = await #expect(throws: ServiceError.self) { _ = try await store.listRecipes(RecipeListQuery(idSuffix: "%")) }
            #expect(badSuffix?.code == .invalidArgument && badSuffix?.message.contains("the end of a recipe id") == true)

            var seen: [String] = []
            var query = RecipeListQuery(sort: .name, limit: 3)
            for _ in 0..<10 {
                let page = try await store.listRecipes(query)
                seen += page.recipes.map(\.name)
                guard let next = page.nextCursor else { break }
                query.cursor = next
            }
            #expect(seen == seen.sorted { $0.lowercased() < $1.lowercased() })
            #expect(seen.count == 8 && Set(seen).count == 8)

            let byTime = try await store.listRecipes(RecipeListQuery(sort: .totalTime, descending: true, limit: 2))
            #expect(byTime.recipes.first?.name == "Duck Breast with Cherry Sauce")
            // Recipes without a time, or a rating, come last whichever way a list runs, page after page.
            let timeless = try await store.createRecipe(id: .timeOrdered(), RecipeDraft(name: "Timeless")).recipe.id
            _ = try await store.createRecipe(id: .timeOrdered(), RecipeDraft(name: "Loved", rating: 5))
            _ = try await store.createRecipe(id: .timeOrdered(), RecipeDraft(name: "Meh", rating: 2))
            for descending in [false, true] {
                for sort in [RecipeSort.totalTime, .rating] {
                    var query = RecipeListQuery(sort: sort, descending: descending, limit: 3)
                    var names: [String] = []
                    for _ in 0..<10 {
                        let page = try await store.listRecipes(query)
                        names += page.recipes.map(\.name)
                        guard let next = page.nextCursor else { break }
                        query.cursor = next
                    }
                    #expect(names.count == 11 && Set(names).count == 11, "\(sort) \(descending): \(names)")
                    if sort == .totalTime { #expect(["Timeless", "Loved", "Meh"].contains(names.last!), "\(descending): \(names)") }
                    if sort == .rating {
                        #expect(Array(names.prefix(2)) == (descending ? ["Loved", "Meh"] : ["Meh", "Loved"]), "\(descending): \(names)")
                    }
                }
            }
            let longestFirst = try await store.listRecipes(RecipeListQuery(sort: .totalTime, descending: true, limit: 200)).recipes.map(\.name)
            #expect(Array(longestFirst.suffix(3)).sorted() == ["Loved", "Meh", "Timeless"], "\(longestFirst)")
            for id in [timeless] { _ = try await store.deleteRecipe(id: id) }
            var wrong = RecipeListQuery(sort: .rating, limit: 2)
            wrong.cursor = byTime.nextCursor
            let error = await #expect(throws: ServiceError.self) { _ = try await store.listRecipes(wrong) }
            #expect(error?.message.contains("sorted another way") == true)
            let tooMany = await #expect(throws: ServiceError.self) { _ = try await store.listRecipes(RecipeListQuery(limit: 0)) }
            #expect(tooMany?.code == .invalidArgument)
        }
    }

    @Test("search matches prefixes across fields, best first")
    func search() async throws {
        try await withStore { store async throws in
            _ = try await store.loadSamples()
            #expect(try await store.searchRecipes("tom", limit: 10).first?.recipe.name == "Classic Tomato Pasta")
            #expect(Set(try await store.searchRecipes("tahini", limit: 10).map(\.recipe.name))
                    == ["Roasted Cauliflower with Tahini", "Hummus from Scratch"])
            #expect(try await store.searchRecipes("tahini", limit: 10).first?.recipe.name == "Roasted Cauliflower with Tahini",
                    "a match in the name ranks above one in the ingredients")
            #expect(try await store.searchRecipes("wok quick", limit: 10).count == 2, "keywords are searched; every word must match")
            #expect(try await store.searchRecipes("nothing-like-this", limit: 10).isEmpty)
            #expect(try await store.searchRecipes("\"AND OR*(", limit: 10).isEmpty, "search syntax in the text is taken literally")
            // A list by name: that name exactly, any case.
            #expect(try await store.listRecipes(RecipeListQuery(name: "caesar SALAD ")).recipes.map(\.name) == ["Caesar Salad"])
            #expect(try await store.listRecipes(RecipeListQuery(name: "Caesar")).recipes.isEmpty)
            // A word after "-" leaves out the recipes that have it; a hyphenated one, the words one after the other.
            #expect(try await store.searchRecipes("tahini -hummus", limit: 10).map(\.recipe.name) == ["Roasted Cauliflower with Tahini"])
            #expect(try await store.searchRecipes("tahini -cauli -humm", limit: 10).isEmpty)
            #expect(try await store.searchRecipes("tahini -\")(", limit: 10).count == 2, "a - before no word leaves nothing out")
            #expect(try await store.searchRecipes("chicken", limit: 10).contains { $0.recipe.name == "Chicken Stir-Fry" })
            #expect(!(try await store.searchRecipes("chicken -stir-fry", limit: 10)).contains { $0.recipe.name == "Chicken Stir-Fry" })
            // Words joined by OR in capitals are alternatives; "or" is a word; a lone OR is nothing.
            #expect(Set(try await store.searchRecipes("hummus OR cauliflower", limit: 10).map(\.recipe.name))
                    == ["Roasted Cauliflower with Tahini", "Hummus from Scratch"])
            #expect(try await store.searchRecipes("tahini hummus OR nothingatall", limit: 10).map(\.recipe.name) == ["Hummus from Scratch"])
            let either = try await store.searchRecipes("egg OR cauliflower -tahini", limit: 10).map(\.recipe.name)
            #expect(either.contains("Egg Fried Rice") && !either.contains("Roasted Cauliflower with Tahini"), "\(either)")
            #expect(Set(try await store.searchRecipes("OR tahini OR", limit: 10).map(\.recipe.name))
                    == Set(try await store.searchRecipes("tahini", limit: 10).map(\.recipe.name)))
            #expect(try await store.searchRecipes("tahini or", limit: 10).count <= 2)
            let lone = await #expect(throws: ServiceError.self) { _ = try await store.searchRecipes("OR", limit: 10) }
            #expect(lone?.message.contains("has no words to look for") == true)
            let onlyOut = await #expect(throws: ServiceError.self) { _ = try await store.searchRecipes("-tahini -NOT(", limit: 10) }
            #expect(onlyOut?.message.contains("only leaves words out") == true && onlyOut?.message.contains("\"pie -tahini\"") == true,
                    "\(onlyOut?.message ?? "")")
            let id = UUID()
            _ = try await store.createRecipe(id: id, RecipeDraft(name: "Plain Toast", notes: "Use sourdough from the bakery"))
            #expect(try await store.searchRecipes("sourd", limit: 10).map(\.recipe.id) == [id], "notes are searched")
            _ = try await store.deleteRecipe(id: id)
            #expect(try await store.searchRecipes("sourd", limit: 10).isEmpty, "deleted recipes leave the index")
        }
    }

    @Test("books: recipes keep existing when their book is deleted")
    func books() async throws {
        try await withStore { store async throws in
            let bookID = UUID()
            let book = try await store.createBook(id: bookID, title: "Jerusalem", author: "Ottolenghi & Tamimi")
            #expect(try await store.createBook(id: bookID, title: "Other", author: nil) == book, "idempotent")
            let recipeID = UUID()
            _ = try await store.createRecipe(id: recipeID, RecipeDraft(name: "Shakshuka", sourceType: .book, bookID: bookID, sourcePageNumber: 12))
            #expect(try await store.listBooks().map(\.recipeCount) == [1])
            #expect(try await store.book(bookID).recipes.map(\.id) == [recipeID])
            #expect(try await store.updateBook(id: bookID, title: "Jerusalem (2012)", author: nil).title == "Jerusalem (2012)")
            #expect(try await store.deleteBook(id: bookID))
            let recipe = try await store.recipe(recipeID)
            #expect(recipe.bookID == nil && recipe.name == "Shakshuka")
            #expect(try await store.listBooks().isEmpty)
        }
    }

    @Test("the catalogue finds foods by name or alias; an alias belongs to one food")
    func catalogue() async throws {
        try await withStore { store async throws in
            _ = try await store.loadSamples()
            #expect(try await store.findIngredient("Scallions").name == "spring onion")
            #expect(try await store.findIngredient("capsicum").name == "bell pepper")
            #expect(try await store.findIngredient("eggs").category == .protein)
            let missing = await #expect(throws: ServiceError.self) { _ = try await store.findIngredient("dragonfruit") }
            #expect(missing?.code == .notFound)
            let added = try await store.upsertIngredient(id: UUID(), name: "Aubergines", category: .vegetable, aliases: ["eggplant", "brinjal"])
            #expect(added.name == "aubergine" && added.aliases == ["brinjal", "eggplant"])
            #expect(try await store.findIngredient("eggplant").id == added.id)
            let updated = try await store.upsertIngredient(id: UUID(), name: "aubergine", category: .vegetable, aliases: ["eggplant"])
            #expect(updated.id == added.id && updated.aliases == ["eggplant"], "same name updates the entry")
            let clash = await #expect(throws: ServiceError.self) {
                _ = try await store.upsertIngredient(id: UUID(), name: "leek", category: nil, aliases: ["scallion"])
            }
            #expect(clash?.message.contains("already names another ingredient") == true)
            // An id another entry has is refused, saying whose (it was a UNIQUE failure answered as internal_error);
            // the same id with that entry's own name updates it.
            let taken = await #expect(throws: ServiceError.self) {
                _ = try await store.upsertIngredient(id: added.id, name: "courgette", category: .vegetable, aliases: [])
            }
            #expect(taken?.code == .invalidArgument && taken?.message.contains("is the ingredient \"aubergine\"'s") == true)
            #expect(try await store.upsertIngredient(id: added.id, name: "aubergine", category: .vegetable, aliases: []).id == added.id)
            #expect(try await store.findIngredient("aubergine").aliases.isEmpty)
            #expect(try await store.listIngredients(category: .herb).map(\.name) == ["basil", "cilantro", "parsley", "thyme"])
        }
    }

    @Test("what can I make: within N missing, through aliases, staples optionally ignored")
    func canMake() async throws {
        try await withStore { store async throws in
            _ = try await store.loadSamples()
            let hummus = ["chickpeas", "tahini", "lemons", "garlic", "cumin", "paprika"]
            let exact = try await store.canMake(have: hummus, maxMissing: 0, ignoreStaples: true).results
            #expect(exact.map(\.recipe.name) == ["Hummus from Scratch"])
            #expect(exact.first?.missing == [])
            #expect(try await store.canMake(have: hummus, maxMissing: 0, ignoreStaples: false).results.isEmpty, "olive oil and salt now count")
            let withStaples = try await store.canMake(have: hummus, maxMissing: 2, ignoreStaples: false).results
            #expect(withStaples.first?.recipe.name == "Hummus from Scratch")
            #expect(withStaples.first?.missing == ["olive oil", "salt"])

            let friedRice = ["eggs", "rice", "soy sauce", "sesame oil", "scallions", "garlic", "green peas"]
            let results = try await store.canMake(have: friedRice, maxMissing: 1, ignoreStaples: true).results
            #expect(results.map(\.recipe.name) == ["Egg Fried Rice"])
            #expect(results.first?.missing == ["carrot"], "scallions and green peas matched through aliases")
            let bad = await #expect(throws: ServiceError.self) { _ = try await store.canMake(have: [], maxMissing: -1, ignoreStaples: true) }
            #expect(bad?.code == .invalidArgument)
        }
    }

    @Test("can-make answers the best `limit` of what qualifies and says how many qualify, in a stable order")
    func canMakeLimit() async throws {
        try await withStore { store async throws in
            // 40 recipes: each needs eggs and one food of its own; every tenth also needs milk.
            var rng = SplitMix(seed: 17)
            for number in (0..<40).shuffled(using: &rng) {
                let lines = ["2 eggs", "1 cup food\(number % 7)"] + (number % 10 == 0 ? ["1 cup milk"] : [])
                _ = try await store.createRecipe(id: UUID(), RecipeDraft(name: "Dish \(String(format: "%02d", number))",
                                                                         ingredients: lines.map { RecipeDraft.Line(text: $0) }))
            }
            let all = try await store.canMake(have: ["eggs"], maxMissing: 2, ignoreStaples: true, limit: 200)
            #expect(all.matching == 40 && all.results.count == 40)
            #expect(all.results.map(\.missing.count) == all.results.map(\.missing.count).sorted(), "fewest missing first")
            #expect(all.results.prefix(36).allSatisfy { $0.missing.count == 1 } && all.results.suffix(4).allSatisfy { $0.missing.count == 2 })
            let firstOnes = all.results.prefix(36).map(\.recipe.name)
            #expect(firstOnes == firstOnes.sorted(), "then by name")
            for limit in [1, 7, 36, 37, 39] {
                let page = try await store.canMake(have: ["eggs"], maxMissing: 2, ignoreStaples: true, limit: limit)
                #expect(page.matching == 40)
                #expect(page.results == Array(all.results.prefix(limit)), "limit \(limit) gives the first \(limit) of the whole answer")
            }
            let none = try await store.canMake(have: ["eggs"], maxMissing: 0, ignoreStaples: true, limit: 5)
            #expect(none.results.isEmpty && none.matching == 0)
        }
    }

    @Test("can-make refuses questions past its bounds, saying which and what is allowed")
    func canMakeBounds() async throws {
        try await withStore { store async throws in
            let cases: [([String], Int, Int, String)] = [
                (["eggs"], 0, 0, "limit is 0; it must be 1 to 200"),
                (["eggs"], 0, 201, "limit is 201; it must be 1 to 200"),
                (["eggs"], 51, 5, "maxMissing is 51; it must be 0 to 50"),
                (Array(repeating: "eggs", count: 501), 0, 5, "have lists 501 foods; it may list at most 500"),
                ([String(repeating: "e", count: 101)], 0, 5, "a food name may be at most 100"),
            ]
            for (have, missing, limit, message) in cases {
                let error = await #expect(throws: ServiceError.self) {
                    _ = try await store.canMake(have: have, maxMissing: missing, ignoreStaples: true, limit: limit)
                }
                #expect(error?.code == .invalidArgument)
                #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
            }
        }
    }

    @Test("a search looks for at most 32 different words in at most 1,000 characters; a word given twice counts once")
    func searchBounds() async throws {
        try await withStore { store async throws in
            _ = try await store.loadSamples()
            let words = (0..<33).map { "word\($0)" }
            let tooMany = await #expect(throws: ServiceError.self) { _ = try await store.searchRecipes(words.joined(separator: " "), limit: 5) }
            #expect(tooMany?.code == .invalidArgument)
            #expect(tooMany?.message == "the search text has 33 different words; a search looks for at most 32")
            let tooLong = await #expect(throws: ServiceError.self) { _ = try await store.searchRecipes(String(repeating: "x", count: 1_001), limit: 5) }
            #expect(tooLong?.message == "the search text is 1001 characters long; it may be at most 1000")
            let once = try await store.searchRecipes("hummus", limit: 5)
            #expect(!once.isEmpty)
            #expect(try await store.searchRecipes(Array(repeating: "hummus", count: 100).joined(separator: " "), limit: 5) == once,
                    "one word a hundred times is that word once")
            #expect(try await store.searchRecipes(words.prefix(32).joined(separator: " "), limit: 5).isEmpty, "32 words are looked for")
        }
    }

    @Test("a search or can-make that runs past the client-read limit is stopped with an error that says why; the next read runs")
    func clientReadLimit() async throws {
        try await withStore { store async throws in
            _ = try await store.loadSamples()
            // Enough rows that each read below takes SQLite thousands of steps (where it looks at the clock).
            let foods = ["apple", "bean", "carrot", "date", "egg", "tomato", "basil", "cumin"]
            _ = try await store.importRecipes((0..<300).map { number in
                (UUID(), RecipeDraft(name: "Batch \(number)", description: "an easy bright crisp dish \(number)",
                                     ingredients: (0..<6).map { RecipeDraft.Line(text: "1 cup \(foods[(number + $0) % foods.count])") }))
            })
            let before = try await store.searchRecipes("tomato", limit: 5)
            store.limitClientReads(to: .zero)
            let stopped = await #expect(throws: ServiceError.self) { _ = try await store.searchRecipes("a b c d e tomato", limit: 5) }
            #expect(stopped?.code == .invalidArgument)
            #expect(stopped?.message.hasPrefix("the search for 6 words was stopped after 0 ms of work, the most one search may take; use fewer words, or longer ones: \"a\", \"b\"") == true,
                    "\(stopped?.message ?? "")")
            let canMake = await #expect(throws: ServiceError.self) { _ = try await store.canMake(have: ["eggs"], maxMissing: 50, ignoreStaples: true) }
            #expect(canMake?.message.hasPrefix("can-make was stopped after 0 ms of work") == true, "\(canMake?.message ?? "")")
            store.limitClientReads(to: .seconds(5))
            // The stop left nothing behind on the reader connections: the same search runs in full again.
            for _ in 0..<8 { #expect(try await store.searchRecipes("tomato", limit: 5) == before) }
            #expect(try await store.canMake(have: ["eggs"], maxMissing: 50, ignoreStaples: true).matching == 308)
        }
    }
}

@Suite("A time limit on one read")
struct QueryTimeLimitTests {
    @Test("a statement past the limit is stopped, an error of the read itself passes through, and the connection is left unbounded")
    func stopsAndCleansUp() throws {
        let queue = try DatabaseQueue()
        let count = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) SELECT count(*) FROM n"
        let start = ContinuousClock.now
        #expect(throws: QueryTimeLimit.Exceeded.self) {
            try queue.inDatabase { db in
                try QueryTimeLimit.run(.milliseconds(50), on: db) { try Int.fetchOne(db, sql: count, arguments: [2_000_000_000]) }
            }
        }
        #expect(ContinuousClock.now - start < .seconds(5), "stopped near its limit, not run to the end")
        #expect(throws: DatabaseError.self) {
            try queue.inDatabase { db in try QueryTimeLimit.run(.seconds(5), on: db) { try db.execute(sql: "SELECT * FROM missing_table") } }
        }
        // After the bounded call, the same connection runs a long statement to its end.
        let total = try queue.inDatabase { db in try Int.fetchOne(db, sql: count, arguments: [3_000_000]) }
        #expect(total == 3_000_000)
        let within = try queue.inDatabase { db in try QueryTimeLimit.run(.seconds(30), on: db) { try Int.fetchOne(db, sql: count, arguments: [1_000]) } }
        #expect(within == 1_000)
    }
}
