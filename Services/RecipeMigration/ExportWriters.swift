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
    /// Completes the export, and returns what an earlier export into the same folder wrote that this one no longer
    /// does (a recipe since renamed or deleted), now removed: the folder or file names.
    @discardableResult mutating func finish() throws -> [String]
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

/// What an export into a folder that holds an earlier one leaves behind. The folder is the collection as it is now:
/// a recipe renamed since has a new folder or file name, and one deleted since has none, so the old ones would stay,
/// and `import-dir` or `migrate` of the folder would bring back the old version or the deleted recipe; a recipe with
/// fewer photos would keep the last ones. Only what RecipeVault's export wrote is removed: a recipe folder or file that
/// carries RecipeVault's own fields (`recipeVault` in the JSON, `recipevault id` in Cooklang's front matter), and the
/// photos named as export names them beside it. Any other file stays.
enum EarlierExport {
    /// The names an export gives photos: `full.jpg`, `photo-2.png` (nextcloud); `Name.jpg`, `Name.1.jpg` (flat).
    static let imageExtensions: Set<String> = Set(ImageKind.allCases.map(\.fileExtension) + ["img", "jpeg"])

    static func isFolderPhoto(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, imageExtensions.contains(String(parts[1])) else { return false }
        return parts[0] == "full" || (parts[0].hasPrefix("photo-") && Int(parts[0].dropFirst(6)) != nil)
    }

    /// Whether a recipe's file was written by RecipeVault's export (the first 64 KB are enough to tell).
    static func isOwn(_ file: URL, format: String) -> Bool {
        guard let handle = try? FileHandle(forReadingFrom: file) else { return false }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 65_536), !head.isEmpty else { return false }
        if format == "cook" {
            let text = String(decoding: head, as: UTF8.self)
            return text.hasPrefix("---\n") && text.contains("\n\(CooklangRecipe.ownIDKey): ")
        }
        guard let whole = head.count < 65_536 ? head : try? Data(contentsOf: file),
              let object = try? JSONSerialization.jsonObject(with: whole) as? [String: Any] else { return false }
        return object["recipeVault"] != nil
    }

    /// Whether `url` is a directory itself, not a link to one: what is removed from a folder an earlier export wrote
    /// is never looked for through a link to another place.
    static func isRealDirectory(_ url: URL) -> Bool {
        var status = stat()
        return lstat(url.path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    static func names(in folder: URL) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    }

    static func remove(_ file: URL) throws {
        do {
            try FileManager.default.removeItem(at: file)
        } catch let error as CocoaError where error.code == .fileNoSuchFile {
            // Gone already.
        }
    }
}

struct NextcloudWriter: ExportWriter {
    let root: URL
    /// Folder names given so far, lower-cased (two folders apart by case only are one on some file systems).
    private var used = Set<String>()
    /// Recipe folders an earlier export wrote here, by name.
    private let earlier: Set<String>
    /// Folders written by this export, with the photo files written in each.
    private var written: [String: Set<String>] = [:]

    init(root: URL) throws {
        self.root = root
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        earlier = Set(EarlierExport.names(in: root).filter {
            EarlierExport.isRealDirectory(root.appendingPathComponent($0))
                && EarlierExport.isOwn(root.appendingPathComponent($0).appendingPathComponent("recipe.json"), format: "json")
        })
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
        written[name] = Set(names)
    }

    mutating func finish() throws -> [String] {
        // Photos an earlier export wrote into a folder written again, that the recipe no longer has.
        for (name, photos) in written where earlier.contains(name) {
            let folder = root.appendingPathComponent(name)
            for file in EarlierExport.names(in: folder) where EarlierExport.isFolderPhoto(file) && !photos.contains(file) {
                try EarlierExport.remove(folder.appendingPathComponent(file))
            }
        }
        // Folders of recipes renamed or deleted since: their recipe and photos; the folder too once nothing else is in it.
        let gone = earlier.subtracting(written.keys).sorted()
        for name in gone {
            let folder = root.appendingPathComponent(name)
            for file in EarlierExport.names(in: folder) where file == "recipe.json" || EarlierExport.isFolderPhoto(file) {
                try EarlierExport.remove(folder.appendingPathComponent(file))
            }
            if EarlierExport.names(in: folder).isEmpty { try EarlierExport.remove(folder) }
        }
        return gone
    }
}

/// One file per recipe in one folder (`Name.cook`, `Name.json`), photos beside it as `Name.jpg`, `Name.1.jpg`…
struct FlatWriter: ExportWriter {
    let root: URL
    let fileExtension: String
    let render: (Recipe, Book?, [String]) throws -> Data
    /// File names written so far, lower-cased (two apart by case only are one on some file systems).
    private var used = Set<String>()
    /// Recipe files an earlier export wrote here, by stem ("Soup" of "Soup.cook").
    private let earlier: Set<String>
    /// Every recipe file's stem in the folder before this export (an earlier export's or not): a photo file belongs to
    /// the longest stem it starts with ("Soup.1.jpg" is the photo of "Soup.1.cook" when there is one).
    private let stemsBefore: Set<String>
    /// Stems written by this export (its files are in `used`).
    private var writtenStems = Set<String>()

    init(root: URL, fileExtension: String, render: @escaping (Recipe, Book?, [String]) throws -> Data) throws {
        self.root = root
        self.fileExtension = fileExtension
        self.render = render
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let suffix = "." + fileExtension
        let recipeFiles = EarlierExport.names(in: root).filter { $0.hasSuffix(suffix) && $0.count > suffix.count }
        stemsBefore = Set(recipeFiles.map { String($0.dropLast(suffix.count)) })
        earlier = Set(recipeFiles.filter { EarlierExport.isOwn(root.appendingPathComponent($0), format: fileExtension) }
            .map { String($0.dropLast(suffix.count)) })
    }

    /// The stem whose photo `file` is ("Soup" for "Soup.jpg" and "Soup.2.png"), the longest of `stems` it fits.
    static func photoStem(_ file: String, among stems: Set<String>) -> String? {
        let parts = file.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2, EarlierExport.imageExtensions.contains(String(parts.last!)) else { return nil }
        var candidates = [parts.dropLast().joined(separator: ".")]
        if parts.count >= 3, Int(parts[parts.count - 2]) != nil { candidates.append(parts.dropLast(2).joined(separator: ".")) }
        return candidates.first(where: stems.contains)
    }

    mutating func add(_ recipe: Recipe, book: Book?, photos: [(info: PhotoInfo, data: Data)]) throws {
        let base = ExportWriters.fileName(recipe.name)
        let extensions = photos.map { photo in ImageKind.allCases.first { $0.mediaType == photo.info.mediaType }?.fileExtension ?? "jpg" }
        func files(_ stem: String) -> [String] {
            ["\(stem).\(fileExtension)"] + extensions.enumerated().map { index, ext in index == 0 ? "\(stem).\(ext)" : "\(stem).\(index).\(ext)" }
        }
        // A name none of whose files another recipe's took (case apart): "Soup"'s second photo is "Soup.1.jpg", the
        // first photo of a recipe named "Soup.1" too.
        var stem = base
        var counter = 2
        while files(stem).contains(where: { used.contains($0.lowercased()) }) { stem = "\(base) (\(counter))"; counter += 1 }
        let planned = files(stem)
        used.formUnion(planned.map { $0.lowercased() })
        let names = Array(planned.dropFirst())
        for (name, photo) in zip(names, photos) {
            try photo.data.write(to: root.appendingPathComponent(name), options: .atomic)
        }
        try render(recipe, book, names).write(to: root.appendingPathComponent(planned[0]), options: .atomic)
        writtenStems.insert(stem)
    }

    mutating func finish() throws -> [String] {
        let gone = earlier.subtracting(writtenStems)
        let stems = stemsBefore.union(writtenStems)
        for file in EarlierExport.names(in: root) where !used.contains(file.lowercased()) {
            let stem = file.hasSuffix("." + fileExtension) ? String(file.dropLast(fileExtension.count + 1)) : Self.photoStem(file, among: stems)
            guard let stem else { continue }
            // A recipe renamed or deleted since, with its photos; or a photo of a recipe written again that it no longer has.
            let stale = gone.contains(stem) || (earlier.contains(stem) && writtenStems.contains(stem) && !file.hasSuffix("." + fileExtension))
            if stale { try EarlierExport.remove(root.appendingPathComponent(file)) }
        }
        return gone.sorted().map { "\($0).\(fileExtension)" }
    }
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

    mutating func finish() throws -> [String] {
        try zip.finish()
        _ = try? FileManager.default.removeItem(at: file)
        try FileManager.default.moveItem(at: partial, to: file)
        return [] // the file is written whole each time
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
