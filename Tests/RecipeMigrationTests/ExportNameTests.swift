import Foundation
@testable import RecipeMigration
import RecipeModel
import RecipeProtocol
import Testing
import TestThreads

/// A recipe's name may be 200 characters of any script (a page imported from anywhere): every export format
/// must still write it, and read it back whole.
@Suite("Export file names from any recipe name", .onOwnThread)
struct ExportNameTests {
    static let names = [
        String(repeating: "日", count: 200), // 600 bytes
        String(repeating: "é", count: 200), // 400 bytes (precomposed)
        "🍲" + String(repeating: "\u{301}", count: 400), // one character of 802 bytes
        "Line\nbreak\tand\u{0}nul\u{7F}\u{85}", // control characters
        "..", " . ", "a/b\\c:d*e?f\"g|h",
        String(repeating: "👩‍👩‍👧‍👦", count: 32), // 25 bytes a character: 800, the most a name may take
    ]

    @Test("a stem is at most 200 bytes, cut between characters, with nothing a file system refuses")
    func stems() {
        for name in Self.names {
            let stem = ExportWriters.fileName(name)
            #expect(stem.utf8.count <= ExportWriters.maxStemBytes && !stem.isEmpty, "\(name.debugDescription)")
            #expect(!stem.contains { "/\\:*?\"<>|".contains($0) } && !stem.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
            #expect(!stem.hasPrefix(".") && !stem.hasSuffix(".") && !stem.hasPrefix(" "))
            #expect(name.hasPrefix(stem) || stem == "Recipe" || name.contains { "/\\:*?\"<>|\n\t\u{0}".contains($0) }, "\(stem)")
        }
        #expect(ExportWriters.fileName(String(repeating: "日", count: 200)) == String(repeating: "日", count: 66))
        #expect(ExportWriters.fileName("..") == "Recipe")
    }

    @Test("every format writes every such recipe, twice over (the second named apart), and reads each back by its name",
          arguments: [ExportFormat.nextcloud, .paprika, .cooklang, .schema])
    func everyFormat(_ format: ExportFormat) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-names-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("export").path
        var writer = try ExportWriters.make(format, path: path)
        let photo = PhotoInfo(id: UUID(), position: 0, sha256: String(repeating: "a", count: 64), byteCount: 4, mediaType: "image/jpeg")
        // A stored name never holds U+0000, nor more than 30 combining marks in a row (the storage refuses both); the other
        // control characters are kept.
        let recipes = (Self.names + Self.names).filter { $0.longestCombiningRun <= String.maxCombiningRun }.map { name in
            Recipe(name: name.replacingOccurrences(of: "\u{0}", with: ""), ingredients: [IngredientLine(text: "1 leek")],
                   instructions: [Instruction(text: "Cook it.")])
        }
        for recipe in recipes {
            try writer.add(recipe, book: nil, photos: [(photo, Data([0xFF, 0xD8, 0xFF, 0xE0, 1, 2]))])
        }
        try writer.finish()
        // Every name written fits in 255 bytes.
        let written = FileManager.default.enumerator(atPath: folder.path)?
            .compactMap { ($0 as? String)?.split(separator: "/").map(String.init) }.flatMap { $0 } ?? []
        #expect(!written.isEmpty)
        for name in written { #expect(name.utf8.count <= 255, "\(name)") }
        let source = try MigrationSource.open(path: ExportWriters.destination(format, path: path), format: MigrationFormat(rawValue: format.rawValue))
        #expect(source.items.count == recipes.count, "\(format)")
        var read: [String] = []
        for item in source.items { read.append(try MigrationReader.read(try item.entry()).draft.name) }
        // Names a person could have stored (no control characters, nothing to trim) come back whole, but in Cooklang,
        // which keeps no name inside the file: there it is the file's.
        let storable = recipes.map(\.name).filter { name in
            name == name.trimmingCharacters(in: .whitespacesAndNewlines) && !name.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
                && name != ".."
        }
        if format != .cooklang {
            for name in storable { #expect(read.contains(name), "\(format): \(name.prefix(20)) came back as one of \(read.map { $0.prefix(20) })") }
        }
    }
}
