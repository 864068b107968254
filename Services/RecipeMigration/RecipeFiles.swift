import Foundation
import RecipeImport
import RecipeModel
import RecipeProtocol

/// The folder layout Nextcloud Cookbook uses: one folder per recipe holding a
/// schema.org `recipe.json` and its photos (the first as `full.<ext>`).
/// RecipeVault's own fields travel in a `recipeVault` object Cookbook ignores.
public enum CookbookFolder {
    public static func photoName(_ index: Int, _ photo: PhotoInfo) -> String {
        let ext = ImageKind.allCases.first { $0.mediaType == photo.mediaType }?.fileExtension ?? "img"
        return index == 0 ? "full.\(ext)" : "photo-\(index + 1).\(ext)"
    }

    public static func folderName(_ recipe: Recipe) -> String {
        // The short id the CLI's tables show.
        ExportWriters.fileName(recipe.name) + " (" + recipe.id.shortText + ")"
    }

    /// A date to the millisecond, as RecipeVault keeps them ("2026-11-24T03:46:17.123Z"); the milliseconds
    /// written from the whole number of them, so no rounding of the fraction moves them.
    static func isoDate(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1_000).rounded())
        let whole = Date(timeIntervalSince1970: Double(milliseconds.quotientAndRemainder(dividingBy: 1_000).quotient))
        let seconds = whole.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: false)).dropLast() // the "Z"
        return seconds + String(format: ".%03dZ", Int(milliseconds % 1_000))
    }

    public static func jsonLD(_ recipe: Recipe, book: Book?, photoNames: [String]) -> [String: Any] {
        var object: [String: Any] = [
            "@context": "https://schema.org", "@type": "Recipe", "identifier": recipe.id.uuidString, "name": recipe.name,
            "recipeIngredient": recipe.ingredients.map(\.text),
            "recipeInstructions": jsonObject(SchemaOrgRecipe.Step.items(recipe.instructions.map { ($0.text, $0.section, $0.title) })),
            "keywords": recipe.keywords.joined(separator: ","), "image": photoNames,
            "dateCreated": Self.isoDate(recipe.createdAt), "dateModified": Self.isoDate(recipe.updatedAt),
        ]
        let optional: [(String, Any?)] = [
            ("description", recipe.description), ("recipeYield", recipe.recipeYield), ("prepTime", recipe.prepTime),
            ("cookTime", recipe.cookTime), ("totalTime", recipe.totalTime), ("recipeCategory", recipe.recipeCategory),
            ("recipeCuisine", recipe.recipeCuisine), ("datePublished", recipe.datePublished), ("url", recipe.website),
            ("author", recipe.author.map { ["@type": "Person", "name": $0] }),
            ("nutrition", recipe.nutrition.map { ["@type": "NutritionInformation", "description": $0] }),
        ]
        for (key, value) in optional { if let value { object[key] = value } }
        var vault: [String: Any] = ["isFavorite": recipe.isFavorite, "rating": recipe.rating, "origin": recipe.origin.rawValue,
                                    "sourceType": recipe.sourceType.rawValue]
        if let servings = recipe.servings { vault["servings"] = servings }
        if let notes = recipe.notes { vault["notes"] = notes }
        if !recipe.keywords.isEmpty { vault["keywords"] = recipe.keywords }
        if let page = recipe.sourcePageNumber { vault["sourcePageNumber"] = page }
        if let book { vault["book"] = ["id": book.id.uuidString, "title": book.title, "author": book.author as Any] }
        object["recipeVault"] = vault
        return object
    }

    /// A Codable value as the plain JSON object JSONSerialization writes.
    public static func jsonObject(_ value: some Encodable) -> Any {
        (try? JSONEncoder().encode(value)).flatMap { try? JSONSerialization.jsonObject(with: $0) } ?? []
    }

    /// The recipe in a `recipe.json`: its id (the identifier, or one derived from the
    /// file so a second import finds the same recipe), draft, book, and photo file names.
    public static func read(_ data: Data, source: String) throws(MigrationError) -> (id: UUID, draft: RecipeDraft, book: BookOps.Fields?, images: [String]) {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw MigrationError("\(source) is not a JSON object")
        }
        let vault = object["recipeVault"] as? [String: Any] ?? [:]
        var draft: RecipeDraft
        if vault.isEmpty {
            draft = try RecipeFiles.draft(data, source: source)
        } else {
            // Read as written, even where a web page's reading would find no recipe (a name that looks like a tag, "<b>").
            draft = (try? RecipeFiles.draft(data, source: source)) ?? RecipeDraft(name: "")
            takeWritten(object, vault: vault, into: &draft)
        }
        // RecipeVault's own export: steps exactly as written, sections (HowToSection) and titles (HowToStep.name) included;
        // exports from before HowToSection named sections in recipeVaultSection.
        if !vault.isEmpty, let items = object["recipeInstructions"] as? [[String: Any]] {
            draft.instructions = items.flatMap { item -> [RecipeDraft.Step] in
                if let inner = item["itemListElement"] as? [[String: Any]] {
                    return inner.compactMap { step in
                        (step["text"] as? String).map { RecipeDraft.Step(text: $0, section: item["name"] as? String, title: step["name"] as? String) }
                    }
                }
                return (item["text"] as? String).map {
                    [RecipeDraft.Step(text: $0, section: item["recipeVaultSection"] as? String, title: item["name"] as? String)]
                } ?? []
            }
        }
        if let nutrition = (object["nutrition"] as? [String: Any])?["description"] as? String { draft.nutrition = nutrition }
        draft.notes = vault["notes"] as? String
        draft.isFavorite = vault["isFavorite"] as? Bool ?? false
        draft.rating = vault["rating"] as? Int ?? 0
        if !vault.isEmpty {
            // Written by export: take these as they are, not guessed (servings from the yield) or derived (total from prep + cook).
            draft.servings = vault["servings"] as? Double
            draft.totalTime = object["totalTime"] as? String
        }
        if let type = (vault["sourceType"] as? String).flatMap(SourceType.init(rawValue:)) { draft.sourceType = type }
        draft.sourcePageNumber = vault["sourcePageNumber"] as? Int
        draft.origin = vault["origin"] as? String == "imported" ? .imported : .custom
        var book: BookOps.Fields?
        if let value = vault["book"] as? [String: Any], let title = value["title"] as? String {
            book = BookOps.Fields(id: (value["id"] as? String).flatMap(UUID.init(uuidString:)), title: title, author: value["author"] as? String)
        }
        let id = (object["identifier"] as? String).flatMap(UUID.init(uuidString:)) ?? derivedID(data)
        let images = (object["image"] as? [String]) ?? [(object["image"] as? String)].compactMap { $0 }
        return (id, draft, book, images.filter { !$0.contains("/") })
    }

    /// RecipeVault's own export (a `recipeVault` object beside the schema.org fields): every text field is taken as it was
    /// written, not read as a web page's text would be. That reading removes what looks like markup ("5 <hot> wings"),
    /// decodes entities ("R&amp;D"), joins lines and runs of spaces, drops a leading "- " from an ingredient line and
    /// splits keywords at commas: right for a page, a loss for a recipe RecipeVault stored and wrote itself. A field of
    /// another type than export writes (a file edited by hand) keeps the web reading.
    static func takeWritten(_ object: [String: Any], vault: [String: Any], into draft: inout RecipeDraft) {
        /// The text written for `key`: nil when export wrote none (it leaves out what a recipe does not have).
        func written(_ key: String, _ fallback: String?) -> String? {
            switch object[key] {
            case nil, is NSNull: nil
            case let text as String: text
            default: fallback
            }
        }
        if let name = object["name"] as? String, !RecipeDraft.isBlank(name) { draft.name = name }
        draft.description = written("description", draft.description)
        if let lines = object["recipeIngredient"] as? [String] {
            draft.ingredients = lines.map { RecipeDraft.Line(text: $0) }
        }
        draft.recipeYield = written("recipeYield", draft.recipeYield)
        draft.prepTime = written("prepTime", draft.prepTime)
        draft.cookTime = written("cookTime", draft.cookTime)
        draft.recipeCategory = written("recipeCategory", draft.recipeCategory)
        draft.recipeCuisine = written("recipeCuisine", draft.recipeCuisine)
        draft.datePublished = written("datePublished", draft.datePublished)
        draft.website = written("url", draft.website)
        switch object["author"] {
        case nil, is NSNull: draft.author = nil
        case let author as [String: Any]: if let name = author["name"] as? String { draft.author = name }
        case let name as String: draft.author = name
        default: break
        }
        // The list itself (a keyword may hold a comma); exports from before it was written give the schema.org text.
        if let keywords = vault["keywords"] as? [String] {
            draft.keywords = keywords
        } else if let text = object["keywords"] as? String {
            draft.keywords = text.split(separator: ",").map { String($0).trimmingWhitespace(newlines: false) }.filter { !RecipeDraft.isBlank($0) }
        }
    }

    /// A stable id for a recipe file that has none (the same bytes give the same id).
    public static func derivedID(_ data: Data) -> UUID {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var second: UInt64 = 0x8422_2325_cbf2_9ce4
        for byte in data {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
            second = (second ^ UInt64(byte)) &* 0x100_0000_01b3 &+ 1
        }
        var bytes = withUnsafeBytes(of: hash.bigEndian, Array.init) + withUnsafeBytes(of: second.bigEndian, Array.init)
        bytes[6] = (bytes[6] & 0x0F) | 0x50 // version 5 style
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}


/// Recipe files RecipeVault has always read: a RecipeDraft, or a schema.org Recipe in JSON-LD.
public enum RecipeFiles {
    /// A recipe file's draft: a schema.org Recipe (read by the same importer the worker uses for web pages) or a RecipeDraft.
    /// `checksFields`: a draft naming a field it does not have is refused (`RecipeDraft.checksFields`), as for a file
    /// a person wrote; another app's file keeps its own fields unread.
    public static func draft(_ data: Data, source: String, checksFields: Bool = false) throws(MigrationError) -> RecipeDraft {
        guard let object = try? JSONSerialization.jsonObject(with: data) else {
            throw MigrationError("\(source) is not JSON; give a recipe draft or a schema.org Recipe in JSON-LD")
        }
        if let imported = RecipeExtractor.extract(json: object, url: nil) {
            var draft = imported.draft
            draft.origin = .custom // added by hand from a file, not fetched by the worker
            return draft
        }
        do {
            let decoder = WireCodec.makeDecoder()
            decoder.userInfo[RecipeDraft.checksFields] = checksFields
            return try decoder.decode(RecipeDraft.self, from: data)
        } catch let error as DecodingError {
            throw MigrationError("\(source) is not a recipe draft: \(describe(error))")
        } catch {
            throw MigrationError("\(source) is not a recipe draft")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, _): "\"\(key.stringValue)\" is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            "\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
        @unknown default: "it could not be read"
        }
    }

    /// A Nextcloud Cookbook folder (or a folder `recipes export` wrote): `recipe.json` and its photos.
    static func nextcloud(_ entry: MigrationEntry) throws(MigrationError) -> MigratedRecipe {
        guard let json = entry.file(named: "recipe.json") else { throw MigrationError("\(entry.label) has no recipe.json") }
        let (id, draft, book, images) = try CookbookFolder.read(json.data, source: "\(entry.label)/recipe.json")
        do { try draft.validate() } catch { throw MigrationError("\(entry.label)/recipe.json: \(error.message)") }
        if let book, book.title.isEmpty || !book.title.isWithin(characters: RecipeDraft.Limits.nameLength) {
            throw MigrationError("\(entry.label)/recipe.json: its book's title is empty or longer than \(RecipeDraft.Limits.nameLength) characters "
                                 + "(\(String.bytesPerCharacter * RecipeDraft.Limits.nameLength) bytes)")
        }
        var photos: [MigratedRecipe.Photo] = images.compactMap { name in entry.file(named: name).map { .init(name: name, data: $0.data) } }
        // Cookbook itself keeps only full.jpg (and its thumbnails) without naming it in the JSON.
        if photos.isEmpty, let full = entry.files.first(where: { $0.name.hasPrefix("full.") && $0.data.looksLikeImage }) {
            photos.append(.init(name: full.name, data: full.data))
        }
        var createdAt: Date?
        if let object = try? JSONSerialization.jsonObject(with: json.data) as? [String: Any] { createdAt = RecipeSketch.date(object["dateCreated"]) }
        return MigratedRecipe(sourceID: "nextcloud:\(id.uuidString)", id: id, draft: draft, createdAt: createdAt,
                              photos: Array(photos.prefix(RecipeVault.maxPhotosPerRecipe)), book: book)
    }

    /// The first `key` in a JSON value, looked for a few levels down (`@graph` holds the recipe).
    static func firstValue(_ key: String, in value: Any, depth: Int = 0) -> Any? {
        guard depth < 6 else { return nil }
        if let object = value as? [String: Any] {
            if let found = object[key] { return found }
            for inner in object.values { if let found = firstValue(key, in: inner, depth: depth + 1) { return found } }
        } else if let list = value as? [Any] {
            for inner in list.prefix(64) { if let found = firstValue(key, in: inner, depth: depth + 1) { return found } }
        }
        return nil
    }

    /// A schema.org Recipe file: JSON-LD, or a saved web page (its JSON-LD or microdata), with photos named in it beside it.
    static func schema(_ entry: MigrationEntry) throws(MigrationError) -> MigratedRecipe {
        guard let file = entry.files.first else { throw MigrationError("\(entry.label) is empty") }
        let lower = file.name.lowercased()
        // RecipeVault's own schema export: every field back, as from its Nextcloud layout.
        if !lower.hasSuffix(".html"), !lower.hasSuffix(".htm"),
           let object = try? JSONSerialization.jsonObject(with: file.data) as? [String: Any], object["recipeVault"] != nil {
            var files = entry.files
            files[0].name = "recipe.json"
            return try nextcloud(MigrationEntry(label: entry.label, format: .schema, files: files))
        }
        var found: (draft: RecipeDraft, images: [String], leftOut: [String])?
        if lower.hasSuffix(".html") || lower.hasSuffix(".htm") {
            // A saved page: its own address is unknown (the recipe's canonical url is kept when the page names one).
            let placeholder = "https://saved.page.invalid/"
            if let read = RecipeExtractor.extract(html: PageText.decode([UInt8](file.data)), url: placeholder) {
                var draft = read.draft
                if draft.website == placeholder { draft.website = nil; draft.sourceType = .manual }
                found = (draft, read.images, read.leftOut)
            }
        } else {
            guard let object = try? JSONSerialization.jsonObject(with: file.data) else {
                throw MigrationError("\(entry.label) is not valid JSON")
            }
            if let read = RecipeExtractor.extract(json: object, url: nil) {
                found = (read.draft, read.images, read.leftOut)
            } else if let draft = try? WireCodec.makeDecoder().decode(RecipeDraft.self, from: file.data) {
                found = (draft, [], [])
            }
        }
        guard var recipe = found else { throw MigrationError("\(entry.label) holds no schema.org Recipe") }
        recipe.draft.origin = .custom
        if !recipe.leftOut.isEmpty {
            let lines = recipe.leftOut.map { "Left out on import: \($0)" }.joined(separator: "\n\n")
            recipe.draft.notes = String(((recipe.draft.notes.map { $0 + "\n\n" } ?? "") + lines).prefix(RecipeDraft.Limits.textLength))
        }
        do { try recipe.draft.validate() } catch { throw MigrationError("\(entry.label): \(error.message)") }
        // Photos beside the file, named in its `image` (only names, not addresses: nothing is fetched).
        let named = Set(recipe.images.map(PathText.lastComponent))
        let photos = entry.files.dropFirst().filter { $0.data.looksLikeImage && (named.isEmpty || named.contains($0.name)) }
        let sourceID = MigratedRecipe.contentID(.schema, file.data)
        let created = (try? JSONSerialization.jsonObject(with: file.data)).flatMap { RecipeSketch.date(firstValue("dateCreated", in: $0)) }
        return MigratedRecipe(sourceID: sourceID, draft: recipe.draft, createdAt: created, photos: photos.prefix(RecipeVault.maxPhotosPerRecipe).map { .init(name: $0.name, data: $0.data) })
    }
}
