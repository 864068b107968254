import Foundation
import RecipeModel
import RecipeProtocol

/// The formats `recipes export` writes, so leaving RecipeVault is as easy as arriving.
public enum ExportFormat: String, CaseIterable, Sendable {
    /// A folder per recipe with `recipe.json` and its photos (Nextcloud Cookbook; RecipeVault's own fields kept).
    case nextcloud
    /// One `.paprikarecipes` file Paprika 3 imports.
    case paprika
    /// A `.cook` file per recipe with its photos beside it.
    case cooklang
    /// A schema.org Recipe JSON-LD file per recipe with its photos beside it.
    case schema
}

/// Writes recipes one at a time in an export format; `finish` completes the file or folder.
public protocol ExportWriter {
    mutating func add(_ recipe: Recipe, book: Book?, photos: [(info: PhotoInfo, data: Data)]) throws
    mutating func finish() throws
}

public enum ExportWriters {
    /// A writer for `format` at `path` (a folder; for Paprika, the file, `.paprikarecipes` added when missing).
    public static func make(_ format: ExportFormat, path: String) throws -> any ExportWriter {
        switch format {
        case .nextcloud: try NextcloudWriter(root: URL(fileURLWithPath: path))
        case .paprika: try PaprikaWriter(file: URL(fileURLWithPath: destination(format, path: path)))
        case .cooklang: try FlatWriter(root: URL(fileURLWithPath: path), fileExtension: "cook") { recipe, _, _ in Data(CooklangRecipe.write(recipe).utf8) }
        case .schema:
            try FlatWriter(root: URL(fileURLWithPath: path), fileExtension: "json") { recipe, book, names in
                let object = CookbookFolder.jsonLD(recipe, book: book, photoNames: names)
                return try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            }
        }
    }

    /// Where `make` writes: `path`, or for Paprika the file with `.paprikarecipes` added when missing.
    public static func destination(_ format: ExportFormat, path: String) -> String {
        format == .paprika && !path.lowercased().hasSuffix(".paprikarecipes") ? path + ".paprikarecipes" : path
    }

    /// The most UTF-8 bytes of a recipe's name a file or folder name takes: with what is added after it
    /// (" (2)", " (1a2b3c4d)", ".paprikarecipe", ".9.jpeg") it stays under the 255 bytes a name may have.
    static let maxStemBytes = 200

    /// A recipe's name as the start of a file or folder name: path separators, control characters and characters
    /// file systems refuse become "-", no leading or trailing dots or spaces, and at most `maxStemBytes` bytes cut
    /// between characters (a name of 200 characters may be 800 bytes, and one character far more).
    static func fileName(_ name: String) -> String {
        let refused = Set("/\\:*?\"<>|")
        let safe = String(name.map { character in
            refused.contains(character) || character.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
                ? "-" : character
        })
        let edges = CharacterSet(charactersIn: ". ").union(.whitespaces)
        var stem = ""
        var bytes = 0
        for character in safe.trimmingCharacters(in: edges) {
            bytes += character.utf8.count
            if bytes > maxStemBytes { break }
            stem.append(character)
        }
        stem = stem.trimmingCharacters(in: edges)
        return stem.isEmpty ? "Recipe" : stem
    }
}

struct NextcloudWriter: ExportWriter {
    let root: URL
    /// Folder names given so far, lower-cased (two folders apart by case only are one on some file systems).
    private var used = Set<String>()

    init(root: URL) throws {
        self.root = root
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    mutating func add(_ recipe: Recipe, book: Book?, photos: [(info: PhotoInfo, data: Data)]) throws {
        // The short id tells apart recipes of one name, unless theirs are alike (8 hex digits collide now and then;
        // before short ids took a time-ordered id's end, every recipe of the same minute had one): such a one takes
        // its whole id, never the other's folder.
        var name = CookbookFolder.folderName(recipe)
        if !used.insert(name.lowercased()).inserted {
            name = ExportWriters.fileName(recipe.name) + " (" + recipe.id.uuidString.lowercased() + ")"
            used.insert(name.lowercased())
        }
        let directory = root.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var names: [String] = []
        for (index, photo) in photos.enumerated() {
            let name = CookbookFolder.photoName(index, photo.info)
            try photo.data.write(to: directory.appendingPathComponent(name), options: .atomic)
            names.append(name)
        }
        let json = CookbookFolder.jsonLD(recipe, book: book, photoNames: names)
        try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            .write(to: directory.appendingPathComponent("recipe.json"), options: .atomic)
    }

    mutating func finish() throws {}
}

/// One file per recipe in one folder (`Name.cook`, `Name.json`), photos beside it as `Name.jpg`, `Name.1.jpg`…
struct FlatWriter: ExportWriter {
    let root: URL
    let fileExtension: String
    let render: (Recipe, Book?, [String]) throws -> Data
    private var used = Set<String>()

    init(root: URL, fileExtension: String, render: @escaping (Recipe, Book?, [String]) throws -> Data) throws {
        self.root = root
        self.fileExtension = fileExtension
        self.render = render
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    mutating func add(_ recipe: Recipe, book: Book?, photos: [(info: PhotoInfo, data: Data)]) throws {
        let base = ExportWriters.fileName(recipe.name)
        var stem = base
        var counter = 2
        while !used.insert(stem.lowercased()).inserted { stem = "\(base) (\(counter))"; counter += 1 }
        var names: [String] = []
        for (index, photo) in photos.enumerated() {
            let ext = ImageKind.allCases.first { $0.mediaType == photo.info.mediaType }?.fileExtension ?? "jpg"
            let name = index == 0 ? "\(stem).\(ext)" : "\(stem).\(index).\(ext)"
            try photo.data.write(to: root.appendingPathComponent(name), options: .atomic)
            names.append(name)
        }
        try render(recipe, book, names).write(to: root.appendingPathComponent("\(stem).\(fileExtension)"), options: .atomic)
    }

    mutating func finish() throws {}
}

/// A `.paprikarecipes` file: a zip of gzip-compressed recipe JSON, written as recipes come
/// (only the zip's directory is held until the end), then moved into place.
struct PaprikaWriter: ExportWriter {
    let file: URL
    private let partial: URL
    private var zip: ZipWriter
    private var used = Set<String>()

    init(file: URL) throws {
        self.file = file
        self.partial = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).partial")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        self.zip = try ZipWriter(path: partial)
    }

    mutating func add(_ recipe: Recipe, book: Book?, photos: [(info: PhotoInfo, data: Data)]) throws {
        let base = ExportWriters.fileName(recipe.name)
        var stem = base
        var counter = 2
        while !used.insert(stem.lowercased()).inserted { stem = "\(base) (\(counter))"; counter += 1 }
        let ext = { (info: PhotoInfo) in ImageKind.allCases.first { $0.mediaType == info.mediaType }?.fileExtension ?? "jpg" }
        let named = photos.enumerated().map { (name: "\(stem)-\($0.offset + 1).\(ext($0.element.info))", data: $0.element.data) }
        let object = PaprikaRecipe.object(recipe, photos: named)
        let json = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        try zip.add(path: "\(stem).paprikarecipe", data: Compression.deflate(json, gzip: true))
    }

    mutating func finish() throws {
        try zip.finish()
        _ = try? FileManager.default.removeItem(at: file)
        try FileManager.default.moveItem(at: partial, to: file)
    }
}

/// A zip written to a file entry by entry (stored, not compressed again).
struct ZipWriter {
    private let handle: FileHandle
    private var builder = ZipBuilder()

    init(path: URL) throws {
        _ = FileManager.default.createFile(atPath: path.path, contents: nil)
        handle = try FileHandle(forWritingTo: path)
        try handle.truncate(atOffset: 0)
    }

    mutating func add(path: String, data: Data) throws {
        guard builder.count < 65_535, builder.offset + data.count < Int(UInt32.max) - 65_536 else {
            throw MigrationError("the export passed what a plain zip holds (65,535 recipes or 4 GB)")
        }
        try builder.add(path: path, data: data) { try handle.write(contentsOf: $0) }
    }

    mutating func finish() throws {
        try handle.write(contentsOf: builder.end())
        try handle.synchronize()
        try handle.close()
    }
}
