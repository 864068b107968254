import Foundation
@testable import RecipeMigration
import RecipeModel
import RecipeProtocol
import TestThreads
import Testing

/// The hand-built exports under Fixtures/ (make-fixtures.py writes them from each app's documented format).
let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

/// Every entry of an export read as the worker reads it: the recipe, or why not, by label.
func readAll(_ path: String, from format: MigrationFormat? = nil) throws -> (source: MigrationSource, read: [String: Result<MigratedRecipe, MigrationError>]) {
    let source = try MigrationSource.open(path: fixtures.appendingPathComponent(path).path, format: format)
    var read: [String: Result<MigratedRecipe, MigrationError>] = [:]
    for item in source.items {
        read[item.label] = Result { () throws(MigrationError) -> MigratedRecipe in
            // Through the frame the worker receives, as in a real migration.
            let entry = try item.entry()
            guard let travelled = MigrationEntry.decode(entry.encoded()) else { throw MigrationError("did not travel") }
            #expect(travelled == entry)
            return try MigrationReader.read(travelled)
        }
    }
    return (source, read)
}

func fixture(_ name: String) throws -> Data { try Data(contentsOf: fixtures.appendingPathComponent(name)) }

@Suite("Reading other apps' exports", .onOwnThread)
struct MigrationFormatTests {
    @Test("Paprika: every field that has a place is kept, the rest goes into notes; broken entries say why; macOS cruft is skipped")
    func paprika() throws {
        let (source, read) = try readAll("paprika/Recipes.paprikarecipes")
        #expect(source.format == .paprika)
        #expect(source.items.map(\.label).sorted() == ["Bad JSON.paprikarecipe", "Broken gzip.paprikarecipe", "Crème brûlée à l'orange.paprikarecipe",
                                                      "Fluffy Pancakes (copy).paprikarecipe", "Fluffy Pancakes.paprikarecipe", "No name.paprikarecipe"])
        let brulee = try read["Crème brûlée à l'orange.paprikarecipe"]!.get()
        let draft = brulee.draft
        #expect(draft.name == "Crème brûlée à l'orange — «classique»")
        #expect(draft.ingredients.map(\.text) == ["500 ml crème fraîche (35 %)", "5 jaunes d'œufs", "100 g sucre", "1 orange, zeste"])
        #expect(draft.instructions.map(\.text) == ["Chauffer la crème avec le zeste.", "Fouetter les jaunes et le sucre ; verser la crème.",
                                                   "Cuire 45 min à 150 °C au bain-marie."])
        #expect(draft.prepTime == "PT15M" && draft.cookTime == "PT45M" && draft.totalTime == "PT1H10M")
        #expect(draft.recipeYield == "6 ramequins" && draft.servings == 6)
        #expect(draft.rating == 4 && draft.isFavorite)
        #expect(draft.keywords == ["Desserts", "Français"] && draft.recipeCategory == "Desserts, Français")
        #expect(draft.nutrition == "Calories: 420 kcal\nFat: 35 g")
        #expect(draft.website == "https://example.org/creme-brulee" && draft.description == "Un classique à l'orange 🍊.")
        #expect(draft.notes == "Caraméliser au chalumeau juste avant de servir.\n\nDifficulty: Medium")
        #expect(draft.author == "Grand-mère Odette", "Paprika's source, who the recipe is from")
        #expect(brulee.createdAt == Date(timeIntervalSince1970: 1_551_702_896))
        #expect(brulee.photos.map(\.data) == [try fixture("photos/brulee.jpg")])
        #expect(brulee.sourceID == "paprika:5D3E0F0A-1B2C-4D5E-8F90-A1B2C3D4E5F6")

        let pancakes = try read["Fluffy Pancakes.paprikarecipe"]!.get()
        #expect(pancakes.photos.map(\.data) == [try fixture("photos/pancakes.jpg"), try fixture("photos/shakshuka.png")], "photo_data, then photos")
        #expect(pancakes.draft.prepTime == nil && pancakes.draft.notes?.contains("Prep time: overnight") == true, "a time it cannot read keeps its words")
        #expect(try read["Fluffy Pancakes (copy).paprikarecipe"]!.get().id == pancakes.id, "the same uid is the same recipe")

        #expect(failure(read["Broken gzip.paprikarecipe"])?.contains("is not a readable gzip file") == true)
        #expect(failure(read["Bad JSON.paprikarecipe"]) == "Bad JSON.paprikarecipe is not valid JSON")
        #expect(failure(read["No name.paprikarecipe"]) == "No name.paprikarecipe has no recipe name; a recipe needs one")

        let folder = try readAll("paprika-folder")
        #expect(folder.source.format == .paprika && folder.read.count == 2)
        #expect(try folder.read["Crème brûlée.paprikarecipe"]!.get().id == brulee.id, "a folder of .paprikarecipe files reads the same")
    }

    @Test("Mealie: the recipe export and the backup give the same recipe; sections, notes, tools and extras are kept")
    func mealie() throws {
        let (source, read) = try readAll("mealie/mealie-export.zip")
        #expect(source.format == .mealie)
        let recipe = try read["recipes/gado-gado/gado-gado.json"]!.get()
        let draft = recipe.draft
        #expect(draft.name == "Gado-gado (Ñoño's way)")
        #expect(draft.ingredients.map(\.text) == ["Sauce:", "150 g peanuts", "to taste", "1/2 cup cabbage finely sliced"])
        #expect(draft.instructions.map(\.section) == ["Sauce", "Sauce", "Salad"])
        #expect(draft.instructions.map(\.text) == ["Grind the peanuts.", "Loosen with water.", "Blanch the vegetables."])
        #expect(draft.prepTime == "PT30M" && draft.cookTime == "PT20M" && draft.totalTime == "PT1H")
        #expect(draft.servings == 4 && draft.rating == 5 && draft.keywords == ["Salad", "Vegetarian", "Peanut"])
        #expect(draft.nutrition?.contains("Calories: 380") == true && draft.nutrition?.contains("Fat: 22") == true)
        #expect(draft.notes == "Tip: Use kecap manis.\n\nTools: Mortar\n\nspice: medium")
        #expect(draft.website == "https://example.org/gado-gado")
        #expect(recipe.photos.count == 1 && recipe.photos[0].name == "original.webp", "the original, not its smaller copies")
        #expect(failure(read["recipes/broken/broken.json"]) == "recipes/broken/broken.json is not valid JSON")
        #expect(failure(read["recipes/nameless/nameless.json"])?.contains("has no recipe name") == true)

        let backup = try readAll("mealie/mealie-backup.zip")
        #expect(backup.source.format == .mealie && backup.read.count == 2)
        let restored = try backup.read["database.json: Gado-gado (Ñoño's way)"]!.get()
        #expect(restored.id == recipe.id, "the backup's id without dashes is the export's id")
        #expect(restored.draft.ingredients.map(\.text) == ["Sauce:", "150 g peanuts", "1/2 cup cabbage finely sliced"], "rows in position order, units and foods by id")
        #expect(restored.draft.isFavorite && restored.draft.keywords == ["Salad", "Vegetarian"] && restored.photos.count == 1)
        #expect(failure(backup.read["database.json: empty"])?.contains("has no recipe name") == true)
    }

    @Test("Tandoor: inner zips, ingredients from every step, headers, working and waiting time; a damaged inner zip fails alone")
    func tandoor() throws {
        let (source, read) = try readAll("tandoor/tandoor-export.zip")
        #expect(source.format == .tandoor && read.count == 4)
        let recipe = try read["12.zip"]!.get()
        #expect(recipe.draft.name == "Käsespätzle")
        #expect(recipe.draft.ingredients.map(\.text) == ["Teig:", "400 g flour, type 405", "4 eggs", "salt", "200 g Bergkäse"])
        #expect(recipe.draft.instructions.map(\.title) == ["Dough", nil])
        #expect(recipe.draft.prepTime == "PT30M" && recipe.draft.cookTime == "PT15M" && recipe.draft.totalTime == "PT45M")
        #expect(recipe.draft.recipeYield == "4 portions" && recipe.draft.servings == 4 && recipe.draft.keywords == ["German", "Comfort"])
        #expect(recipe.draft.nutrition?.contains("Calories: 650 kcal") == true)
        #expect(recipe.photos.map(\.data) == [try fixture("photos/brulee.jpg")])
        #expect(failure(read["13.zip"])?.contains("is not a readable zip file") == true)
        #expect(failure(read["14.zip"])?.contains("has no recipe name") == true)
        #expect(failure(read["15.zip"]) == "15.zip holds no recipe.json")
    }

    @Test("Cooklang: marks become ingredient lines and plain steps; sections, notes, timers, cookware; photos beside; Windows-1252 text")
    func cooklang() throws {
        let (source, read) = try readAll("cooklang")
        #expect(source.format == .cooklang)
        let recipe = try read["Shakshuka.cook"]!.get()
        let draft = recipe.draft
        #expect(draft.name == "Shakshuka (شakshouka)")
        #expect(draft.ingredients.map(\.text) == ["2 tbsp olive oil", "1 onion (diced)", "400 g tinned tomatoes", "1 tsp cumin", "salt", "4 eggs"])
        #expect(draft.instructions.map(\.text) == ["Warm olive oil in a cast iron pan. Add onion and cook for 5 minutes.",
                                                   "Add tinned tomatoes, cumin and salt. Simmer 10 minutes.",
                                                   "Crack eggs into wells and cover until set."])
        #expect(draft.instructions.map(\.section) == [nil, nil, "Eggs"])
        #expect(draft.totalTime == "PT25M" && draft.servings == 2 && draft.keywords == ["breakfast", "eggs"] && draft.recipeCategory == "brunch")
        #expect(draft.website == "https://example.org/shakshuka")
        #expect(draft.notes == "Serve with bread.\n\nCookware: cast iron pan")
        #expect(recipe.photos.map(\.name) == ["Shakshuka.png", "Shakshuka.1.jpg"], "the recipe's photo, then step photos")
        #expect(try read["Latin-1.cook"]!.get().draft.instructions.first?.text == "Café au lait with milk.")
        #expect(try read["Tea.cook"]!.get().draft.ingredients.map(\.text) == ["1 bag tea", "250 ml water"])
    }

    @Test("Chowdown: front matter lists, or lists under the body's headings; the photo from images/; README skipped")
    func chowdown() throws {
        let (source, read) = try readAll("chowdown")
        #expect(source.format == .chowdown)
        #expect(source.ignored.contains("README.md"))
        let guacamole = try read["_recipes/guacamole.md"]!.get()
        #expect(guacamole.draft.name == "Guacamole: the real one")
        #expect(guacamole.draft.ingredients.map(\.text) == ["3 avocados", "1 lime, juiced", "1/2 tsp salt"])
        #expect(guacamole.draft.instructions.map(\.text) == ["Mash the avocados.", "Stir in lime and salt."])
        #expect(guacamole.draft.description == "A dip for every day." && guacamole.draft.keywords == ["mexican", "dip"])
        #expect(guacamole.draft.notes == "Keep the stone in to stop browning.\n\nPhoto credit: https://example.org/photo")
        #expect(guacamole.photos.map(\.data) == [try fixture("chowdown/images/guacamole.jpg")])
        #expect(read["_recipes/broken.md"] != nil, "text that is not UTF-8 is read as Windows-1252, not refused")
        let lemonade = try read["_recipes/body-lists.md"]!.get()
        #expect(lemonade.draft.ingredients.map(\.text) == ["4 lemons", "1 l water"] && lemonade.draft.instructions.map(\.text) == ["Squeeze.", "Stir."])
    }

    @Test("schema.org files: JSON-LD with its photo beside it, a saved page, a RecipeDraft; a page without a recipe says so")
    func schemaFiles() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-schema-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let photo = try fixture("photos/brulee.jpg")
        try photo.write(to: folder.appendingPathComponent("porridge.jpg"))
        try photo.write(to: folder.appendingPathComponent("best porridge.jpg"))
        try Data("""
            {"@context": "https://schema.org", "@graph": [{"@type": "Recipe", "name": "Porridge", "image": "porridge.jpg",
             "recipeIngredient": ["1 cup oats", "2 cups milk"], "recipeInstructions": "Simmer 5 minutes.", "totalTime": "PT5M",
             "dateCreated": "2020-02-03T04:05:06Z", "url": "https://example.org/porridge"}]}
            """.utf8).write(to: folder.appendingPathComponent("porridge.json"))
        try Data("""
            <html><head><script type="application/ld+json">{"@type": "Recipe", "name": "Saved Soup", "recipeIngredient": ["1 leek"],
            "recipeInstructions": [{"@type": "HowToStep", "text": "Simmer."}]}</script></head><body></body></html>
            """.utf8).write(to: folder.appendingPathComponent("saved soup.html"))
        try Data(#"{"name": "Draft Toast", "ingredients": ["2 slices bread"], "instructions": ["Toast."], "rating": 4}"#.utf8)
            .write(to: folder.appendingPathComponent("toast.json"))
        try Data("<html><body><p>Just a blog post.</p></body></html>".utf8).write(to: folder.appendingPathComponent("blog.html"))
        // A page saved from an older site, in its own encoding, which its <meta> names.
        try #"<html><head><meta charset="windows-1252"><script type="application/ld+json">{"@type": "Recipe", "name": "Gratin dauphinois", "recipeIngredient": ["1 kg pommes de terre", "50 cl crème fraîche"]}</script></head></html>"#
            .data(using: .windowsCP1252)!.write(to: folder.appendingPathComponent("gratin.html"))
        let source = try MigrationSource.open(path: folder.path, format: nil)
        #expect(source.format == .schema && source.items.count == 5)
        var read: [String: Result<MigratedRecipe, MigrationError>] = [:]
        for item in source.items { read[item.label] = Result { () throws(MigrationError) in try MigrationReader.read(try item.entry()) } }
        let porridge = try read["porridge.json"]!.get()
        #expect(porridge.draft.ingredients.map(\.text) == ["1 cup oats", "2 cups milk"] && porridge.draft.totalTime == "PT5M")
        #expect(porridge.photos.map(\.name) == ["porridge.jpg"], "the photo it names, not one whose name merely contains it")
        #expect(porridge.createdAt == Date(timeIntervalSince1970: 1_580_702_706))
        let soup = try read["saved soup.html"]!.get()
        #expect(soup.draft.name == "Saved Soup" && soup.draft.website == nil, "a saved page's own address is not known")
        #expect(try read["toast.json"]!.get().draft.rating == 4)
        #expect(try read["gratin.html"]!.get().draft.ingredients.map(\.text) == ["1 kg pommes de terre", "50 cl crème fraîche"])
        #expect(failure(read["blog.html"]) != nil)
    }

    @Test("a Chowdown site's other pages (layout page, post) are left alone; a Mealie backup's per-user ratings and favourites are read")
    func siteAndPerUser() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-site-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("_recipes"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("---\nlayout: page\ntitle: About\n---\nThis site.\n".utf8).write(to: folder.appendingPathComponent("about.md"))
        try Data("---\nlayout: recipe\ntitle: Tea\ningredients:\n- 1 bag tea\n---\n".utf8).write(to: folder.appendingPathComponent("_recipes/tea.md"))
        let site = try MigrationSource.open(path: folder.path, format: nil)
        #expect(site.format == .chowdown && site.items.map(\.label) == ["_recipes/tea.md"] && site.ignored == ["about.md"])

        let database = #"{"recipes": [{"id": "abc", "name": "Stew", "slug": "stew", "rating": null}], "users_to_recipes": [{"user_id": "u1", "recipe_id": "abc", "rating": 3, "is_favorite": false}, {"user_id": "u2", "recipe_id": "abc", "rating": 5, "is_favorite": true}]}"#
        let recipes = try MealieBackup.recipes(in: Data(database.utf8))
        let entry = MigrationEntry(label: recipes[0].label, format: .mealie, files: [.init(name: "recipe.json", data: recipes[0].json)])
        let stew = try MigrationReader.read(entry)
        #expect(stew.draft.rating == 5 && stew.draft.isFavorite)
    }

    @Test("a path that is no export, an empty folder and a missing path are refused with a sentence")
    func notAnExport() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(throws: MigrationError.self) { try MigrationSource.open(path: folder.path, format: nil) }
        #expect(throws: MigrationError.self) { try MigrationSource.open(path: folder.appendingPathComponent("nothing").path, format: nil) }
        try Data("just words".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        do {
            _ = try MigrationSource.open(path: folder.path, format: nil)
            Issue.record("a folder of text files is not an export")
        } catch {
            #expect(error.message.contains("is not an export RecipeVault reads") && error.message.contains("--from"))
        }
    }
}

func failure(_ result: Result<MigratedRecipe, MigrationError>?) -> String? {
    guard case .failure(let error) = result else { return nil }
    return error.message
}
