import Foundation
import RecipeModel
import RecipeProtocol
import Testing
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
            #expect(try await store.listIngredients(category: .herb).map(\.name) == ["basil", "cilantro", "parsley", "thyme"])
        }
    }

    @Test("what can I make: within N missing, through aliases, staples optionally ignored")
    func canMake() async throws {
        try await withStore { store async throws in
            _ = try await store.loadSamples()
            let hummus = ["chickpeas", "tahini", "lemons", "garlic", "cumin", "paprika"]
            let exact = try await store.canMake(have: hummus, maxMissing: 0, ignoreStaples: true)
            #expect(exact.map(\.recipe.name) == ["Hummus from Scratch"])
            #expect(exact.first?.missing == [])
            #expect(try await store.canMake(have: hummus, maxMissing: 0, ignoreStaples: false).isEmpty, "olive oil and salt now count")
            let withStaples = try await store.canMake(have: hummus, maxMissing: 2, ignoreStaples: false)
            #expect(withStaples.first?.recipe.name == "Hummus from Scratch")
            #expect(withStaples.first?.missing == ["olive oil", "salt"])

            let friedRice = ["eggs", "rice", "soy sauce", "sesame oil", "scallions", "garlic", "green peas"]
            let results = try await store.canMake(have: friedRice, maxMissing: 1, ignoreStaples: true)
            #expect(results.map(\.recipe.name) == ["Egg Fried Rice"])
            #expect(results.first?.missing == ["carrot"], "scallions and green peas matched through aliases")
            let bad = await #expect(throws: ServiceError.self) { _ = try await store.canMake(have: [], maxMissing: -1, ignoreStaples: true) }
            #expect(bad?.code == .invalidArgument)
        }
    }
}
