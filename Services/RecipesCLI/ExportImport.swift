import ArgumentParser
import Foundation
import Messaging
import RecipeModel
import RecipeProtocol

/// The folder layout Nextcloud Cookbook uses: one folder per recipe holding a
/// schema.org `recipe.json` and its photos (the first as `full.<ext>`).
/// RecipeVault's own fields travel in a `recipeVault` object Cookbook ignores.
enum CookbookFolder {
    static func photoName(_ index: Int, _ photo: PhotoInfo) -> String {
        let ext = ImageKind.allCases.first { $0.mediaType == photo.mediaType }?.fileExtension ?? "img"
        return index == 0 ? "full.\(ext)" : "photo-\(index + 1).\(ext)"
    }

    static func folderName(_ recipe: Recipe) -> String {
        let safe = recipe.name.map { "/\\:*?\"<>|".contains($0) ? "-" : $0 }
        return String(safe).trimmingCharacters(in: .whitespaces) + " (" + String(recipe.id.uuidString.prefix(8)).lowercased() + ")"
    }

    static func jsonLD(_ recipe: Recipe, book: Book?, photoNames: [String]) -> [String: Any] {
        var object: [String: Any] = [
            "@context": "https://schema.org", "@type": "Recipe", "identifier": recipe.id.uuidString, "name": recipe.name,
            "recipeIngredient": recipe.ingredients.map(\.text),
            "recipeInstructions": jsonObject(SchemaOrgRecipe.Step.items(recipe.instructions.map { ($0.text, $0.section, $0.title) })),
            "keywords": recipe.keywords.joined(separator: ","), "image": photoNames,
            "dateCreated": recipe.createdAt.formatted(.iso8601), "dateModified": recipe.updatedAt.formatted(.iso8601),
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
        if let page = recipe.sourcePageNumber { vault["sourcePageNumber"] = page }
        if let book { vault["book"] = ["id": book.id.uuidString, "title": book.title, "author": book.author as Any] }
        object["recipeVault"] = vault
        return object
    }

    /// A Codable value as the plain JSON object JSONSerialization writes.
    static func jsonObject(_ value: some Encodable) -> Any {
        (try? JSONEncoder().encode(value)).flatMap { try? JSONSerialization.jsonObject(with: $0) } ?? []
    }

    /// The recipe in a `recipe.json`: its id (the identifier, or one derived from the
    /// file so a second import finds the same recipe), draft, book, and photo file names.
    static func read(_ data: Data, source: String) throws -> (id: UUID, draft: RecipeDraft, book: BookOps.Fields?, images: [String]) {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw CLIError("\(source) is not a JSON object")
        }
        var draft = try DraftFile.decode(data, source: source)
        let vault = object["recipeVault"] as? [String: Any] ?? [:]
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

    /// A stable id for a recipe file that has none (the same bytes give the same id).
    static func derivedID(_ data: Data) -> UUID {
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

struct ExportRecipes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write every recipe and its photos to a folder (Nextcloud Cookbook layout).",
        discussion: "Starter recipes are left out (recipes samples brings them back) unless --include-starters is given.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The folder to write (created if needed).") var folder: String
    @Flag(help: "Export the starter recipes too (they import as your own copies).") var includeStarters = false

    func run() async throws {
        try await reportingFailures {
            let client = try connection.storageClient()
            let root = URL(fileURLWithPath: folder)
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            var books: [UUID: Book] = [:]
            for summary in try await client.call(BookOps.List.self, Empty()).books { books[summary.book.id] = summary.book }
            var query = RecipeListQuery(sort: .createdAt, limit: RecipeListQuery.maxLimit)
            var exported = 0, photoCount = 0
            while true {
                let page = try await client.call(RecipeOps.List.self, query)
                for summary in page.recipes where includeStarters || summary.origin != .starter {
                    let recipe = try await client.call(RecipeOps.Get.self, .init(id: summary.id)).recipe
                    let directory = root.appendingPathComponent(CookbookFolder.folderName(recipe))
                    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                    var names: [String] = []
                    for (index, photo) in recipe.photos.enumerated() {
                        let reply = try await client.send(PhotoOps.Get.self, .init(recipeID: recipe.id, position: index))
                        let name = CookbookFolder.photoName(index, photo)
                        try reply.frames.first?.write(to: directory.appendingPathComponent(name), options: .atomic)
                        names.append(name)
                    }
                    let json = CookbookFolder.jsonLD(recipe, book: recipe.bookID.flatMap { books[$0] }, photoNames: names)
                    try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                        .write(to: directory.appendingPathComponent("recipe.json"), options: .atomic)
                    exported += 1
                    photoCount += names.count
                }
                guard let next = page.nextCursor else { break }
                query.cursor = next
            }
            if connection.json { return try Output.json(["recipes": exported, "photos": photoCount]) }
            print("Exported \(exported) recipes and \(photoCount) photos to \(folder).")
        }
    }
}

struct ImportFolder: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-dir", abstract: "Import a folder written by export (or by Nextcloud Cookbook). Importing twice adds nothing.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The folder to read.") var folder: String

    func run() async throws {
        try await reportingFailures {
            let client = try connection.storageClient()
            let root = URL(fileURLWithPath: folder)
            guard let entries = try? FileManager.default.contentsOfDirectory(atPath: root.path) else {
                throw CLIError("cannot read the folder \(folder)", status: ExitStatus.notFound)
            }
            // Photos go through recipe-worker's photo intake when it is there, so oversized ones are fitted, not refused.
            let sender = try await PhotoSender.make(connection: connection, asIs: false, keepMetadata: false)
            if let note = sender.note { printNote(note) }
            var created = 0, existing = 0, photosAdded = 0
            for entry in entries.sorted() {
                let directory = root.appendingPathComponent(entry)
                let file = directory.appendingPathComponent("recipe.json")
                guard FileManager.default.fileExists(atPath: file.path) else { continue }
                let (id, draftWithoutBook, book, images) = try CookbookFolder.read(try readFile(file.path), source: "\(entry)/recipe.json")
                var draft = draftWithoutBook
                if let book {
                    draft.bookID = try await client.call(BookOps.Create.self, book).id
                }
                // Every photo is read and made to fit before anything of this recipe is sent.
                var photos: [Data] = []
                for name in images {
                    photos.append(try await sender.prepare(try readFile(directory.appendingPathComponent(name).path), file: "\(entry)/\(name)").bytes)
                }
                let result = try await client.call(RecipeOps.Create.self, .init(id: id, recipe: draft))
                if result.created { created += 1 } else { existing += 1 }
                var known = Set(result.recipe.photos.map(\.sha256))
                for bytes in photos {
                    let before = known.count
                    let after = try await client.send(PhotoOps.Add.self, .init(recipeID: id), frames: [bytes]).body.photos
                    known = Set(after.map(\.sha256))
                    photosAdded += known.count - before
                }
            }
            if connection.json { return try Output.json(["created": created, "alreadyThere": existing, "photosAdded": photosAdded]) }
            print("Imported \(created) new recipes (\(existing) were already there) and \(photosAdded) photos.")
        }
    }
}
