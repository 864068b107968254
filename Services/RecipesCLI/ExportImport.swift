import ArgumentParser
import Foundation
import RecipeMigration
import Messaging
import RecipeModel
import RecipeProtocol

extension ExportFormat: ExpressibleByArgument {}

struct ExportRecipes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write every recipe and its photos in a format RecipeVault and other apps read.",
        discussion: """
            --format nextcloud (the default) writes a folder per recipe (Nextcloud Cookbook's layout; RecipeVault's own fields \
            kept, so import-dir or migrate brings everything back); paprika writes one .paprikarecipes file Paprika 3 imports; \
            cooklang writes a .cook file per recipe; schema writes a schema.org JSON-LD file per recipe. Photos are written as \
            they are stored. Starter recipes are left out (recipes samples brings them back) unless --include-starters is given. \
            Exporting again into the same folder brings it up to date: what the earlier export wrote there for a recipe \
            renamed or deleted since, and photos a recipe no longer has, are removed; files of anything else stay.
            """)
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The folder to write (created if needed); for --format paprika, the file (.paprikarecipes is added).") var folder: String
    @Option(help: ArgumentHelp("nextcloud, paprika, cooklang or schema.", valueName: "format")) var format: ExportFormat = .nextcloud
    @Flag(help: "Export the starter recipes too (they import as your own copies).") var includeStarters = false

    func run() async throws {
        try await reportingFailures {
            let client = try connection.storageClient()
            var writer: any ExportWriter
            do {
                writer = try ExportWriters.make(format, path: folder)
            } catch {
                var isFolder: ObjCBool = false
                if format != .paprika, FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), !isFolder.boolValue {
                    throw CLIError("\(folder) is a file; --format \(format.rawValue) writes a folder there: give a folder's path", status: ExitStatus.cannotWrite)
                }
                throw CLIError(FileProblem(error)?.sentence ?? "cannot write to \(folder): \(error)", status: ExitStatus.cannotWrite)
            }
            var books: [UUID: Book] = [:]
            for summary in try await allBooks(client) { books[summary.book.id] = summary.book }
            var query = RecipeListQuery(sort: .createdAt, limit: RecipeListQuery.maxLimit)
            var exported = 0, photoCount = 0
            var lost: [String] = []
            while true {
                let page = try await client.call(RecipeOps.List.self, query)
                for summary in page.recipes where includeStarters || summary.origin != .starter {
                    let recipe = try await client.call(RecipeOps.Get.self, .init(id: summary.id)).recipe
                    var photos: [(info: PhotoInfo, data: Data)] = []
                    for (index, photo) in recipe.photos.enumerated() {
                        do {
                            let reply = try await client.send(PhotoOps.Get.self, .init(recipeID: recipe.id, position: index))
                            if let bytes = reply.frames.first { photos.append((photo, bytes)) }
                        } catch let error as ServiceError where error.code == .notFound {
                            // Its file is lost from the storage's disk (or it went meanwhile): the rest is still exported.
                            lost.append("\(recipe.name) (photo \(index + 1))")
                        }
                    }
                    do {
                        try writer.add(recipe, book: recipe.bookID.flatMap { books[$0] }, photos: photos)
                    } catch {
                        let problem = FileProblem(error)
                        throw CLIError("\(problem?.sentence ?? "cannot write \"\(recipe.name)\": \(error)"); the export stopped after "
                                       + "\(Output.count(exported, "recipe")) (written to \(folder))", status: problem?.status ?? ExitStatus.cannotWrite)
                    }
                    exported += 1
                    photoCount += photos.count
                }
                guard let next = page.nextCursor else { break }
                query.cursor = next
            }
            let removed = try writer.finish()
            let place = ExportWriters.destination(format, path: folder)
            if !lost.isEmpty {
                printNote("left out \(Output.count(lost.count, "photo")) whose file is missing or damaged on the storage's disk: "
                          + "\(lost.prefix(5).joined(separator: ", "))\(lost.count > 5 ? ", …" : ""); a sync with a replica that holds "
                          + "\(lost.count == 1 ? "it brings it" : "them brings them") back — export again after it")
            }
            if connection.json {
                return try Output.json(["recipes": exported, "photos": photoCount, "lostPhotos": lost.count, "removed": removed.count])
            }
            print("Exported \(Output.count(exported, "recipe")) and \(Output.count(photoCount, "photo")) to \(place) (\(format.rawValue)).")
            if !removed.isEmpty {
                print("Removed what an earlier export wrote there for \(Output.count(removed.count, "recipe")) since renamed or deleted: "
                      + removed.prefix(5).joined(separator: ", ") + (removed.count > 5 ? ", …" : "") + ".")
            }
        }
    }
}

/// What `recipes import-dir --json` prints.
struct ImportFolderReport: Encodable {
    struct Failure: Encodable {
        var entry: String
        var error: String
    }
    var created: Int
    var alreadyThere: Int
    var photosAdded: Int
    /// Recipe folders that could not be imported, and why.
    var failed: [Failure]
    /// Photos that were passed over ("folder/file: why").
    var photosLeftOut: [String]
}

struct ImportFolder: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-dir", abstract: "Import a folder written by export (or by Nextcloud Cookbook). Importing twice adds nothing.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The folder to read.") var folder: String

    /// Why `error` stops only this recipe or photo (its data was refused, or a file of it is missing or not a
    /// file), or nil when it stops the whole import (the storage is not reachable, its disk is full, …).
    static func aboutTheEntry(_ error: any Error) -> String? {
        let aboutTheData = [ExitStatus.refused, ExitStatus.notFound, ExitStatus.readOnly]
        switch error {
        case let error as CLIError: return aboutTheData.contains(error.status) ? error.message : nil
        case let error as ServiceError: return aboutTheData.contains(ExitStatus.of(error.code)) ? error.message : nil
        case let error as MigrationError: return error.message
        default: return nil
        }
    }

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
            // What is wrong with one recipe or photo of the folder is said and passed over; what stops the storage
            // taking any (not reachable, a full disk) stops the import, and running it again goes on (nothing twice).
            var failed: [(entry: String, reason: String)] = []
            var photosLeftOut: [String] = []
            for entry in entries.sorted() {
                let directory = root.appendingPathComponent(entry)
                let file = directory.appendingPathComponent("recipe.json")
                guard FileManager.default.fileExists(atPath: file.path) else { continue }
                do {
                    let read: (id: UUID, draft: RecipeDraft, book: BookOps.Fields?, images: [String])
                    do {
                        read = try CookbookFolder.read(try readFile(file.path, what: "recipe.json"), source: "\(entry)/recipe.json")
                    } catch let error as MigrationError {
                        throw CLIError(error.message)
                    }
                    let (id, draftWithoutBook, book, images) = read
                    var draft = draftWithoutBook
                    if let book {
                        draft.bookID = try await client.call(BookOps.Create.self, book).id
                    }
                    // Every photo is read and made to fit before anything of this recipe is sent.
                    var photos: [(name: String, bytes: Data)] = []
                    for name in images {
                        do {
                            photos.append((name, try await sender.prepare(try readFile(directory.appendingPathComponent(name).path, what: "a photo"),
                                                                          file: "\(entry)/\(name)").bytes))
                        } catch {
                            guard let reason = Self.aboutTheEntry(error) else { throw error }
                            let said = reason.replacingOccurrences(of: directory.path + "/", with: "")
                            photosLeftOut.append(said.hasPrefix("\(entry)/") ? said : "\(entry)/\(name): \(said)")
                        }
                    }
                    let result = try await client.call(RecipeOps.Create.self, .init(id: id, recipe: draft))
                    if result.created { created += 1 } else { existing += 1 }
                    var known = Set(result.recipe.photos.map(\.sha256))
                    for photo in photos {
                        do {
                            let before = known.count
                            let after = try await client.send(PhotoOps.Add.self, .init(recipeID: id), frames: [photo.bytes]).body.photos
                            known = Set(after.map(\.sha256))
                            photosAdded += known.count - before
                        } catch {
                            guard let reason = Self.aboutTheEntry(error) else { throw error }
                            photosLeftOut.append("\(entry)/\(photo.name): \(reason)")
                        }
                    }
                } catch {
                    guard let reason = Self.aboutTheEntry(error) else { throw error }
                    failed.append((entry, reason))
                }
            }
            if connection.json {
                return try Output.json(ImportFolderReport(created: created, alreadyThere: existing, photosAdded: photosAdded,
                                                          failed: failed.map { .init(entry: $0.entry, error: $0.reason) }, photosLeftOut: photosLeftOut))
            }
            print("Imported \(Output.count(created, "new recipe")) (\(existing) \(existing == 1 ? "was" : "were") already there) and \(Output.count(photosAdded, "photo"))"
                  + (failed.isEmpty ? "." : "; \(failed.count) could not be imported:"))
            for (entry, reason) in failed { print("  ✗ \(entry): \(reason)") }
            for note in photosLeftOut { print(Output.dim("  photo left out: \(note)")) }
        }
    }
}
