import Foundation
@testable import RecipeMigration
import RecipeModel
import RecipeProtocol
import Testing
import TestThreads

/// `recipes export` into a folder that holds an earlier export: the folder is brought up to date, so reading it back
/// (`import-dir`, `migrate`) gives the collection as it is now, and nothing but the export's own files is touched.
@Suite("Exporting again into the same folder", .onOwnThread)
struct ExportAgainTests {
    static let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0, 1, 2])

    static func photo(_ position: Int) -> (info: PhotoInfo, data: Data) {
        (PhotoInfo(id: UUID(), position: position, sha256: String(repeating: "a", count: 64), byteCount: 6, mediaType: "image/jpeg"), jpeg + [UInt8(position)])
    }

    static func recipe(_ name: String, id: UUID) -> Recipe {
        Recipe(id: id, name: name, ingredients: [IngredientLine(text: "1 leek")], instructions: [Instruction(text: "Cook it.")])
    }

    static func files(_ folder: URL) -> Set<String> {
        Set(FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? [])
    }

    @Test("a recipe renamed or deleted since leaves nothing behind, a photo removed since goes, other files stay",
          arguments: [ExportFormat.nextcloud, .cooklang, .schema])
    func again(_ format: ExportFormat) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-again-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let soup = UUID(), stew = UUID(), pie = UUID()
        var first = try ExportWriters.make(format, path: folder.path)
        try first.add(Self.recipe("Soup", id: soup), book: nil, photos: [Self.photo(0), Self.photo(1), Self.photo(2)])
        try first.add(Self.recipe("Stew", id: stew), book: nil, photos: [Self.photo(0)])
        try first.add(Self.recipe("Pie", id: pie), book: nil, photos: [])
        #expect(try first.finish().isEmpty)
        // What a person put there: a note, a recipe of their own with a photo, a file in a recipe's folder.
        try Data("mine".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        let ownRecipe = format == .nextcloud ? "Mine/recipe.json" : format == .cooklang ? "Mine.cook" : "Mine.json"
        let ownPhoto = format == .nextcloud ? "Mine/full.jpg" : "Mine.jpg"
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("Mine"), withIntermediateDirectories: true)
        try Data((format == .cooklang ? "---\ntitle: Mine\n---\n\nCook @leek{1}.\n" : "{\"@type\": \"Recipe\", \"name\": \"Mine\"}").utf8)
            .write(to: folder.appendingPathComponent(ownRecipe))
        try Self.jpeg.write(to: folder.appendingPathComponent(ownPhoto))
        let before = Self.files(folder)
        let soupFolder = format == .nextcloud ? before.first { $0.hasPrefix("Soup (") && !$0.contains("/") }! : ""
        if format == .nextcloud { try Data("kept".utf8).write(to: folder.appendingPathComponent(soupFolder).appendingPathComponent("my notes.txt")) }

        // Since: Soup renamed and down to one photo, Stew deleted, Pie unchanged.
        var second = try ExportWriters.make(format, path: folder.path)
        try second.add(Self.recipe("Soupe", id: soup), book: nil, photos: [Self.photo(0)])
        try second.add(Self.recipe("Pie", id: pie), book: nil, photos: [])
        let removed = try second.finish()
        let after = Self.files(folder)
        switch format {
        case .nextcloud:
            #expect(removed.count == 2 && removed.allSatisfy { $0.hasPrefix("Soup (") || $0.hasPrefix("Stew (") }, "\(removed)")
            let soupe = try #require(after.first { $0.hasPrefix("Soupe (") && !$0.contains("/") })
            #expect(after.contains("\(soupe)/recipe.json") && after.contains("\(soupe)/full.jpg") && !after.contains("\(soupe)/photo-2.jpg"))
            // The old folder keeps only what the person put there.
            #expect(after.filter { $0.hasPrefix(soupFolder + "/") } == ["\(soupFolder)/my notes.txt"], "\(after.sorted())")
            #expect(!after.contains { $0.hasPrefix("Stew (") }, "\(after.sorted())")
        default:
            let ext = format == .cooklang ? "cook" : "json"
            #expect(removed == ["Soup.\(ext)", "Stew.\(ext)"])
            #expect(after.contains("Soupe.\(ext)") && after.contains("Soupe.jpg") && after.contains("Pie.\(ext)"))
            #expect(after.isDisjoint(with: ["Soup.\(ext)", "Soup.jpg", "Soup.1.jpg", "Soup.2.jpg", "Stew.\(ext)", "Stew.jpg"]), "\(after.sorted())")
        }
        #expect(after.isSuperset(of: ["notes.txt", ownRecipe, ownPhoto]), "what the export did not write stays")

        // Read back, the folder holds the collection as it is now: one recipe per id, by its new name.
        let source = try MigrationSource.open(path: folder.path, format: MigrationFormat(rawValue: format.rawValue))
        var names: [String] = []
        for item in source.items {
            guard let read = try? MigrationReader.read(try item.entry()), read.draft.name != "Mine" else { continue }
            names.append(read.draft.name)
        }
        #expect(names.sorted() == ["Pie", "Soupe"], "\(format)")

        // Once more with nothing changed: nothing removed.
        var third = try ExportWriters.make(format, path: folder.path)
        try third.add(Self.recipe("Soupe", id: soup), book: nil, photos: [Self.photo(0)])
        try third.add(Self.recipe("Pie", id: pie), book: nil, photos: [])
        #expect(try third.finish().isEmpty)
        #expect(Self.files(folder) == after)
    }

    @Test("a link in the folder to an earlier export elsewhere is not followed: nothing there is removed")
    func linksNotFollowed() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("rv-again-link-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: base) }
        let elsewhere = base.appendingPathComponent("elsewhere"), folder = base.appendingPathComponent("export")
        var other = try ExportWriters.make(.nextcloud, path: elsewhere.path)
        try other.add(Self.recipe("Soup", id: UUID()), book: nil, photos: [Self.photo(0)])
        try other.finish()
        let soup = try #require(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).first)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent(soup), withDestinationURL: elsewhere.appendingPathComponent(soup))
        var export = try ExportWriters.make(.nextcloud, path: folder.path)
        try export.add(Self.recipe("Pie", id: UUID()), book: nil, photos: [])
        #expect(try export.finish().isEmpty)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: elsewhere.appendingPathComponent(soup).path)) == ["recipe.json", "full.jpg"])
    }

    @Test("a recipe named like another's photo (Soup.1 beside Soup's second photo) keeps its own photo, whichever comes first",
          arguments: [ExportFormat.cooklang, .schema], [false, true])
    func photoNamesApart(_ format: ExportFormat, soupFirst: Bool) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-apart-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var writer = try ExportWriters.make(format, path: folder.path)
        let soup = (Self.recipe("Soup", id: UUID()), [Self.photo(0), Self.photo(1)])
        let other = (Self.recipe("Soup.1", id: UUID()), [Self.photo(7)])
        for (recipe, photos) in soupFirst ? [soup, other] : [other, soup] { try writer.add(recipe, book: nil, photos: photos) }
        try writer.finish()
        let source = try MigrationSource.open(path: folder.path, format: MigrationFormat(rawValue: format.rawValue))
        var photosOf: [String: [Data]] = [:]
        for item in source.items {
            let read = try MigrationReader.read(try item.entry())
            photosOf[read.id == soup.0.id || read.draft.name == "Soup" ? "Soup" : "Soup.1", default: []] += read.photos.map(\.data)
        }
        #expect(photosOf["Soup"] == soup.1.map(\.data), "\(format), Soup first: \(soupFirst)")
        #expect(photosOf["Soup.1"] == other.1.map(\.data), "\(format), Soup first: \(soupFirst)")
    }

    @Test("a photo belongs to the longest recipe name it starts with: Soup.1.jpg is the photo of a recipe named Soup.1")
    func photoOwners() {
        #expect(FlatWriter.photoStem("Soup.1.jpg", among: ["Soup", "Soup.1"]) == "Soup.1")
        #expect(FlatWriter.photoStem("Soup.1.jpg", among: ["Soup"]) == "Soup")
        #expect(FlatWriter.photoStem("Soup.jpg", among: ["Soup"]) == "Soup")
        #expect(FlatWriter.photoStem("Soup.txt", among: ["Soup"]) == nil)
        #expect(FlatWriter.photoStem("Soup.x.jpg", among: ["Soup"]) == nil)
        #expect(EarlierExport.isFolderPhoto("photo-12.webp") && EarlierExport.isFolderPhoto("full.jpg"))
        #expect(!EarlierExport.isFolderPhoto("photo-x.jpg") && !EarlierExport.isFolderPhoto("recipe.json") && !EarlierExport.isFolderPhoto("full.jpg.bak"))
    }
}
