import Foundation
import RecipeProtocol

/// Reads one entry of an export into a recipe (the worker does this, entry by entry).
public enum MigrationReader {
    public static func read(_ entry: MigrationEntry) throws(MigrationError) -> MigratedRecipe {
        switch entry.format {
        case .paprika: try PaprikaRecipe.read(entry)
        case .mealie: try MealieRecipe.read(entry)
        case .tandoor: try TandoorRecipe.read(entry)
        case .cooklang: try CooklangRecipe.read(entry)
        case .chowdown: try ChowdownRecipe.read(entry)
        case .nextcloud: try RecipeFiles.nextcloud(entry)
        case .schema: try RecipeFiles.schema(entry)
        }
    }
}

/// An export from another app as `recipes migrate` finds it: its format (detected, or named
/// with `--from`) and its entries, each cut out only when it is sent, so a large export is
/// never held in memory whole.
public struct MigrationSource: Sendable {
    public struct Item: Sendable {
        public var label: String
        let load: @Sendable () throws(MigrationError) -> MigrationEntry
        /// The entry's files, read from the export.
        public func entry() throws(MigrationError) -> MigrationEntry { try load() }
    }

    public var format: MigrationFormat
    /// What was read, for the job ("Paprika export Recipes.paprikarecipes").
    public var description: String
    public var items: [Item]
    /// Files of the export that are not recipes of its format (left alone), for the report.
    public var ignored: [String] = []

    /// The largest entry sent to the worker (a recipe and its photos).
    public static let maxEntryBytes = 15 * 1_024 * 1_024
    /// The most files one folder export may hold.
    static let maxFiles = 200_000

    public static func open(path: String, format: MigrationFormat?) throws(MigrationError) -> MigrationSource {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw MigrationError("\(path) does not exist; give an export file or folder")
        }
        let root = URL(fileURLWithPath: path)
        let files: any ExportFiles = isDirectory.boolValue ? try FolderFiles(root) : try ArchiveFiles(file: root)
        let found = format ?? detect(files)
        guard let found else {
            throw MigrationError("\(root.lastPathComponent) is not an export RecipeVault reads: no Paprika recipes (.paprikarecipe), Mealie database.json or recipe JSON, Tandoor recipe zips, Cooklang .cook files, Chowdown Markdown, Nextcloud Cookbook recipe.json or schema.org files were found in it; name the app with --from if it is one of these")
        }
        var source = MigrationSource(format: found, description: "\(found.appName) export \(root.lastPathComponent)", items: [])
        try source.cut(files)
        guard !source.items.isEmpty else {
            throw MigrationError("\(root.lastPathComponent) holds no \(found.appName) recipes" + (format == nil ? "" : " (--from \(found.rawValue)); check the format"))
        }
        return source
    }

    // MARK: Finding the format

    static func detect(_ files: any ExportFiles) -> MigrationFormat? {
        let paths = files.paths
        let lower = paths.map { $0.lowercased() }
        if lower.contains(where: { $0.hasSuffix(".paprikarecipe") }) { return .paprika }
        if lower.contains(where: { $0 == "database.json" || $0.hasSuffix("/database.json") }) { return .mealie }
        if lower.contains(where: { $0.hasSuffix(".cook") }) { return .cooklang }
        if lower.contains(where: { $0.hasSuffix(".zip") }) { return .tandoor }
        if lower.contains(where: { $0.hasSuffix("/recipe.json") || $0 == "recipe.json" }) { return .nextcloud }
        let jsons = paths.filter { $0.lowercased().hasSuffix(".json") }
        if let first = jsons.first, let data = try? files.read(first), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
           object["slug"] != nil, object["recipeIngredient"] != nil || object["recipe_ingredient"] != nil {
            return .mealie
        }
        if lower.contains(where: { $0.hasSuffix(".md") || $0.hasSuffix(".markdown") }) { return .chowdown }
        if !jsons.isEmpty || lower.contains(where: { $0.hasSuffix(".html") || $0.hasSuffix(".htm") }) { return .schema }
        return nil
    }

    // MARK: Cutting entries

    private mutating func cut(_ files: any ExportFiles) throws(MigrationError) {
        let format = self.format
        let paths = files.paths
        let images = paths.filter { Self.isImageName($0) }
        func entry(_ label: String, _ parts: [(name: String, path: String)]) -> Item {
            Item(label: label) { () throws(MigrationError) -> MigrationEntry in
                var out: [MigrationEntry.File] = []
                var total = 0
                for part in parts {
                    let data = try files.read(part.path)
                    total += data.count
                    guard total <= Self.maxEntryBytes else {
                        throw MigrationError("\(label) is \(total / 1_048_576) MB or more with its photos; entries of up to \(Self.maxEntryBytes / 1_048_576) MB are migrated")
                    }
                    out.append(.init(name: part.name, data: data))
                }
                return MigrationEntry(label: label, format: format, files: out)
            }
        }
        @Sendable func folder(_ path: String) -> String { PathText.deletingLastComponent(path) }
        @Sendable func name(_ path: String) -> String { PathText.lastComponent(path) }
        @Sendable func stem(_ path: String) -> String { PathText.deletingExtension(name(path)) }
        var used = Set<String>()
        switch format {
        case .paprika:
            for path in paths where path.lowercased().hasSuffix(".paprikarecipe") {
                items.append(entry(path, [(name(path), path)]))
                used.insert(path)
            }
        case .mealie:
            if let database = paths.first(where: { name($0) == "database.json" }) {
                let recipes = try MealieBackup.recipes(in: try files.read(database))
                // Images live in data/recipes/<id>/images/ (the id with or without dashes).
                var imagesByID: [String: String] = [:]
                for path in images where path.contains("/recipes/") && name(path).hasPrefix("original.") {
                    let parts = path.split(separator: "/")
                    if let index = parts.firstIndex(of: "recipes"), index + 1 < parts.count {
                        imagesByID[parts[index + 1].lowercased().replacingOccurrences(of: "-", with: "")] = path
                    }
                }
                used.insert(database)
                for recipe in recipes {
                    let json = recipe.json
                    let image = imagesByID[recipe.id]
                    if let image { used.insert(image) }
                    items.append(Item(label: recipe.label) { () throws(MigrationError) -> MigrationEntry in
                        var out = [MigrationEntry.File(name: "recipe.json", data: json)]
                        if let image { out.append(.init(name: name(image), data: try files.read(image))) }
                        return MigrationEntry(label: recipe.label, format: .mealie, files: out)
                    })
                }
            } else {
                for path in paths where path.lowercased().hasSuffix(".json") {
                    let directory = folder(path)
                    let imageFolder = directory.isEmpty ? "images" : directory + "/images"
                    let pictures = images.filter { folder($0) == directory || folder($0) == imageFolder }
                        .filter { !name($0).hasPrefix("min-") && !name($0).hasPrefix("tiny-") }
                    items.append(entry(path, [(name(path), path)] + pictures.map { (name($0), $0) }))
                    used.insert(path)
                    used.formUnion(pictures)
                }
            }
        case .tandoor:
            for path in paths where path.lowercased().hasSuffix(".zip") {
                items.append(entry(path, [(name(path), path)]))
                used.insert(path)
            }
        case .cooklang:
            // A picture is the recipe's whose name it has, or starts with before a dot ("Soup.jpg", "Soup.1.jpg"): the
            // longest such name in its folder, so "Soup.1.jpg" beside "Soup.1.cook" is that recipe's, not Soup's step photo.
            let recipes = paths.filter { $0.lowercased().hasSuffix(".cook") }
            let keys = Set(recipes.map { folder($0) + "/" + stem($0) })
            var picturesOf: [String: [String]] = [:]
            for image in images {
                var base = stem(image)
                while true {
                    if keys.contains(folder(image) + "/" + base) {
                        picturesOf[folder(image) + "/" + base, default: []].append(image)
                        break
                    }
                    guard let dot = base.lastIndex(of: ".") else { break }
                    base = String(base[..<dot])
                }
            }
            for path in recipes {
                let pictures = picturesOf[folder(path) + "/" + stem(path)] ?? []
                items.append(entry(path, [(name(path), path)] + pictures.map { (name($0), $0) }))
                used.insert(path)
                used.formUnion(pictures)
            }
        case .chowdown:
            for path in paths where [".md", ".markdown"].contains(where: path.lowercased().hasSuffix) {
                let text = (try? files.read(path)).map { String(decoding: $0.prefix(64 * 1_024), as: UTF8.self) } ?? ""
                // A README or another page of the site (`layout: page`, `default`, `post`…) is not a recipe.
                guard let front = MiniYAML.frontMatter(text)?.fields else { continue }
                if let layout = RecipeSketch.text(front["layout"]), !layout.isEmpty, !layout.lowercased().contains("recipe") { continue }
                var parts = [(name(path), path)]
                if let image = RecipeSketch.text(front["image"]).map(PathText.lastComponent), !image.isEmpty,
                   let found = images.first(where: { name($0) == image }) {
                    parts.append((image, found))
                    used.insert(found)
                }
                items.append(entry(path, parts))
                used.insert(path)
            }
        case .nextcloud:
            for path in paths where name(path) == "recipe.json" {
                let directory = folder(path)
                let siblings = paths.filter { folder($0) == directory && $0 != path && Self.isImageName($0) }
                items.append(entry(directory.isEmpty ? path : directory, [("recipe.json", path)] + siblings.map { (name($0), $0) }))
                used.insert(path)
                used.formUnion(siblings)
            }
        case .schema:
            for path in paths where [".json", ".jsonld", ".html", ".htm"].contains(where: path.lowercased().hasSuffix) {
                let directory = folder(path)
                // Photos beside it whose names the file mentions.
                let head = (try? files.read(path)).map { String(decoding: $0.prefix(4 * 1_024 * 1_024), as: UTF8.self) } ?? ""
                let pictures = images.filter { folder($0) == directory && (head.contains("\"\(name($0))\"") || head.contains("/\(name($0))\"")) }
                items.append(entry(path, [(name(path), path)] + pictures.map { (name($0), $0) }))
                used.insert(path)
                used.formUnion(pictures)
            }
        }
        ignored = paths.filter { !used.contains($0) && !Self.isImageName($0) }
        items.sort { $0.label.localizedStandardCompare($1.label) == .orderedAscending }
    }

    static func isImageName(_ path: String) -> Bool {
        let lower = path.lowercased()
        return [".jpg", ".jpeg", ".png", ".webp", ".heic", ".heif", ".avif", ".gif"].contains(where: lower.hasSuffix)
    }
}

/// The files of an export: a folder's, or a zip's.
protocol ExportFiles: Sendable {
    /// Paths relative to the export, without macOS cruft and hidden files.
    var paths: [String] { get }
    func read(_ path: String) throws(MigrationError) -> Data
}

struct FolderFiles: ExportFiles {
    let root: URL
    let paths: [String]

    init(_ root: URL) throws(MigrationError) {
        self.root = root
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey],
                                                         options: [.skipsHiddenFiles, .skipsPackageDescendants]) else {
            throw MigrationError("cannot read the folder \(root.path)")
        }
        var found: [String] = []
        let base = root.standardizedFileURL.path
        for case let url as URL in walker {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else { continue }
            let full = url.standardizedFileURL.path
            guard full.hasPrefix(base) else { continue }
            let relative = String(full.dropFirst(base.count)).trimmingCharacters(in: CharacterSet(charactersIn: "/"))
            if relative.hasPrefix("__MACOSX") || relative.contains("/__MACOSX/") { continue }
            found.append(relative)
            guard found.count <= MigrationSource.maxFiles else { throw MigrationError("\(root.path) holds more than \(MigrationSource.maxFiles) files") }
        }
        self.paths = found.sorted()
    }

    func read(_ path: String) throws(MigrationError) -> Data {
        do {
            return try LocalFile.read(root.appendingPathComponent(path).path, atMost: ZipArchive.maxEntrySize, what: "a file of an export")
        } catch {
            throw MigrationError(error.message)
        }
    }
}

struct ArchiveFiles: ExportFiles {
    let archive: ZipArchive?
    let single: (name: String, data: Data)?
    let paths: [String]

    /// A zip export, or one file (a single `.paprikarecipe`, `.cook`, `.md`, `.json`, `.html`) with what is beside it.
    init(file: URL) throws(MigrationError) {
        let data: Data
        var status = stat()
        guard stat(file.path, &status) == 0 else { throw MigrationError("cannot read \(file.path): \(String(cString: strerror(errno)))") }
        // Mapped, not read: an export with its photos may be large. A device or a pipe has nothing to map.
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw MigrationError("\(file.path) is not a regular file (a device, pipe or socket); an export must be a file or a folder")
        }
        do {
            data = try Data(contentsOf: file, options: .alwaysMapped)
        } catch {
            throw MigrationError("cannot read \(file.path)")
        }
        if ZipArchive.looksLikeZip(data) || ["zip", "paprikarecipes"].contains(file.pathExtension.lowercased()) {
            do {
                let archive = try ZipArchive(data)
                self.archive = archive
                self.single = nil
                self.besideRoot = nil
                self.paths = archive.files.map(\.path).filter { !$0.split(separator: "/").contains { $0.hasPrefix(".") } }
            } catch {
                throw MigrationError("\(file.lastPathComponent): \(error)")
            }
        } else {
            self.archive = nil
            self.single = (file.lastPathComponent, data)
            // Photos beside a single file (Cooklang's Name.jpg, a saved page's images).
            let directory = file.deletingLastPathComponent()
            let siblings = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            let stem = file.deletingPathExtension().lastPathComponent
            self.besideRoot = directory
            self.paths = [file.lastPathComponent] + siblings.filter { MigrationSource.isImageName($0) && $0.hasPrefix(stem) }.sorted()
        }
    }

    private let besideRoot: URL?

    func read(_ path: String) throws(MigrationError) -> Data {
        if let single {
            if path == single.name { return single.data }
            guard let besideRoot else { throw MigrationError("cannot read \(path)") }
            do {
                return try LocalFile.read(besideRoot.appendingPathComponent(path).path, atMost: ZipArchive.maxEntrySize, what: "a file beside the export")
            } catch {
                throw MigrationError(error.message)
            }
        }
        guard let archive, let entry = archive.entry(path) else { throw MigrationError("the export has no \(path)") }
        do {
            return try archive.read(entry)
        } catch {
            throw MigrationError("\(path): \(error)")
        }
    }
}
