import Foundation
import RecipeModel
import RecipeProtocol

/// Paprika 3's `.paprikarecipe`: one gzip-compressed JSON object per recipe (docs/MIGRATE.md).
enum PaprikaRecipe {
    /// The most a recipe's JSON may unpack to (its photos are base64 inside it).
    static let maxJSONBytes = 48 * 1_024 * 1_024

    static func read(_ entry: MigrationEntry) throws(MigrationError) -> MigratedRecipe {
        guard let file = entry.files.first else { throw MigrationError("\(entry.label) is empty") }
        var json = file.data
        if Compression.isGzip(file.data) {
            do throws(Compression.Failure) {
                json = try Compression.inflate(file.data, wrapping: .gzipOrZlib, limit: maxJSONBytes)
            } catch {
                switch error {
                case .tooLarge(let limit):
                    throw MigrationError("\(entry.label) unpacks to more than \(limit / 1_048_576) MiB, more than any recipe")
                case .damaged(let why):
                    throw MigrationError("\(entry.label) is not a readable gzip file (\(why)); Paprika writes each recipe gzip-compressed")
                }
            }
        }
        let object = try RecipeSketch.object(json, entry.label)
        return try recipe(object, label: entry.label, raw: json)
    }

    static func recipe(_ p: [String: Any], label: String, raw: Data) throws(MigrationError) -> MigratedRecipe {
        var sketch = RecipeSketch()
        sketch["name"] = p["name"]
        sketch["description"] = p["description"]
        sketch["recipeIngredient"] = RecipeSketch.lines(p["ingredients"])
        sketch["recipeInstructions"] = RecipeSketch.lines(p["directions"])
        sketch["recipeYield"] = RecipeSketch.text(p["servings"])
        sketch["prepTime"] = p["prep_time"]
        sketch["cookTime"] = p["cook_time"]
        sketch["totalTime"] = p["total_time"]
        let categories = (p["categories"] as? [Any] ?? []).compactMap { category -> String? in
            // Paprika writes names; its sync API writes objects with a name.
            RecipeSketch.text(category) ?? RecipeSketch.text((category as? [String: Any])?["name"])
        }
        sketch["recipeCategory"] = categories
        sketch["keywords"] = categories
        sketch.sourceURL = RecipeSketch.text(p["source_url"])
        if let notes = RecipeSketch.text(p["notes"]) { sketch.notes.append(notes) }
        // Who or where the recipe is from ("Grand-mère Odette", "NYT Cooking"): the author, where export writes it. An
        // address (or an essay) stays a note.
        let source = RecipeSketch.text(p["source"]).flatMap { RecipeDraft.isBlank($0) ? nil : $0 }
        let sourceIsAuthor = source.map { text in
            // An author validation would refuse (too long, a NUL, a stack of accents) stays a note, which holds more.
            !text.hasPrefix("http://") && !text.hasPrefix("https://") && (try? RecipeDraft(name: "-", author: text).validate()) != nil
        } ?? false
        if !sourceIsAuthor { sketch.keep("Source", source) }
        sketch.keep("Difficulty", p["difficulty"])
        sketch.rating = RecipeSketch.number(p["rating"]).map { Int($0.rounded()) }
        sketch.isFavorite = RecipeSketch.flag(p["on_favorites"]) || RecipeSketch.flag(p["favorite"])
        sketch.createdAt = RecipeSketch.date(p["created"])
        if let photo = RecipeSketch.base64(p["photo_data"]) {
            sketch.photos.append(.init(name: RecipeSketch.text(p["photo"]) ?? "photo.jpg", data: photo))
        }
        for extra in p["photos"] as? [[String: Any]] ?? [] {
            if let data = RecipeSketch.base64(extra["data"]) {
                sketch.photos.append(.init(name: RecipeSketch.text(extra["filename"]) ?? RecipeSketch.text(extra["name"]) ?? "photo.jpg", data: data))
            }
        }
        var migrated = try sketch.recipe(sourceID: sourceID(p, raw: raw), label: label)
        // Written by RecipeVault's export: the recipe keeps its own id, so migrating the export back into the storage it
        // came from (or into a replica of it) finds the recipe instead of adding it a second time.
        if let own = RecipeSketch.text(p[ownIDKey]).flatMap(UUID.init(uuidString:)) { migrated.id = own }
        if sourceIsAuthor { migrated.draft.author = source }
        // Nutrition has its own field: the text as Paprika kept it.
        if let nutrition = RecipeSketch.text(p["nutritional_info"]), !RecipeDraft.isBlank(nutrition) {
            migrated.draft.nutrition = String(nutrition.prefix(RecipeDraft.Limits.textLength))
        }
        return migrated
    }

    /// The key RecipeVault's export writes the recipe's own id under (Paprika keeps its own `uid` beside it, and
    /// leaves a key it does not know alone).
    static let ownIDKey = "recipevault_id"

    static func sourceID(_ p: [String: Any], raw: Data) -> String {
        if let uid = RecipeSketch.text(p["uid"]), !uid.isEmpty { return "paprika:" + uid.uppercased() }
        return MigratedRecipe.contentID(.paprika, raw)
    }

    // MARK: Writing (recipes export --format paprika)

    /// A recipe as Paprika's JSON object (before gzip).
    static func object(_ recipe: Recipe, photos: [(name: String, data: Data)]) -> [String: Any] {
        var object: [String: Any] = [
            "uid": recipe.id.uuidString, ownIDKey: recipe.id.uuidString, "name": recipe.name,
            "ingredients": recipe.ingredients.map(\.text).joined(separator: "\n"),
            "directions": recipe.instructions.map { step in
                (step.title.map { "\($0): " } ?? "") + step.text
            }.joined(separator: "\n\n"),
            "description": recipe.description ?? "", "notes": recipe.notes ?? "", "nutritional_info": recipe.nutrition ?? "",
            "servings": recipe.recipeYield ?? recipe.servings.map { RecipeSketch.amount($0) } ?? "",
            "prep_time": recipe.prepTime.flatMap(ISODuration.minutes).map(spoken) ?? "",
            "cook_time": recipe.cookTime.flatMap(ISODuration.minutes).map(spoken) ?? "",
            "total_time": recipe.totalTime.flatMap(ISODuration.minutes).map(spoken) ?? "",
            "rating": recipe.rating, "on_favorites": recipe.isFavorite,
            "categories": recipe.keywords, "source": recipe.author ?? "", "source_url": recipe.website ?? "",
            "created": createdFormat.format(recipe.createdAt), "difficulty": "", "image_url": "",
        ]
        if let first = photos.first {
            object["photo_data"] = first.data.base64EncodedString()
            object["photo"] = first.name
        }
        object["photos"] = photos.dropFirst().map { ["name": $0.name, "filename": $0.name, "data": $0.data.base64EncodedString()] }
        return object
    }

    static let createdFormat = Date.VerbatimFormatStyle(
        format: "\(year: .defaultDigits)-\(month: .twoDigits)-\(day: .twoDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits)",
        timeZone: .gmt, calendar: Calendar(identifier: .gregorian))

    /// 90 → "1 hr 30 mins", as Paprika writes times.
    static func spoken(_ minutes: Int) -> String {
        let hours = minutes / 60, rest = minutes % 60
        var parts: [String] = []
        if hours > 0 { parts.append("\(hours) hr" + (hours == 1 ? "" : "s")) }
        if rest > 0 || hours == 0 { parts.append("\(rest) min" + (rest == 1 ? "" : "s")) }
        return parts.joined(separator: " ")
    }
}
