import ArgumentParser
import Foundation
import Messaging
import RecipeModel
import RecipeProtocol

struct PhotoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "photo", abstract: "Add, list, get, move and remove a recipe's photos (10 per recipe, 2 MB each).",
        subcommands: [AddPhotos.self, ListPhotos.self, GetPhoto.self, MovePhoto.self, RemovePhoto.self])
}

struct AddPhotos: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add photos to a recipe, made to fit by recipe-worker.",
        discussion: """
            recipe-worker reads JPEG, PNG, WebP, HEIC and AVIF, turns each photo upright, removes its metadata \
            (GPS position, camera details) and, when it is over 2 MB or longer than 2,560 px, scales it down and \
            re-encodes it (JPEG; PNG or WebP when it has transparency). A photo that already fits is stored byte \
            for byte. Without a reachable worker, or with --as-is, the files are stored untouched and must be \
            JPEG, PNG, WebP or HEIC of at most 2 MB.
            """)
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Recipe id, short id or name.") var recipe: String
    @Argument(help: "Image files.") var files: [String]
    @Flag(name: .long, help: "Store the files untouched, straight into recipe-storage (its 2 MB and format rules apply).")
    var asIs = false
    @Flag(name: .long, help: "Keep the photos' EXIF, XMP and IPTC metadata (GPS position, camera) instead of removing it.")
    var keepMetadata = false

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("name at least one image file") }
        guard files.count <= RecipeVault.maxPhotosPerRecipe else {
            throw ValidationError("\(files.count) files; a recipe holds at most \(RecipeVault.maxPhotosPerRecipe) photos")
        }
        guard !(asIs && keepMetadata) else {
            throw ValidationError("--keep-metadata is for photos recipe-worker fits; --as-is stores the files untouched, metadata and all")
        }
    }

    /// `--json`: the recipe's photos, and what was done to each file.
    struct Result: Codable {
        struct Fitted: Codable {
            var file: String
            var fitting: PhotoFitting
        }
        var photos: [PhotoInfo]
        var fitted: [Fitted]
    }

    func run() async throws {
        try await reportingFailures {
            // The recipe and its room first (nothing to fit if the name is wrong or it is full), then every
            // file is read and made to fit, so nothing is stored when one would be refused.
            let client = try connection.storageClient()
            let id = try await RecipeReference.resolve(recipe, using: client)
            let existing = try await client.call(PhotoOps.ListPhotos.self, .init(recipeID: id)).photos.count
            guard existing + files.count <= RecipeVault.maxPhotosPerRecipe else {
                throw CLIError("the recipe has \(Output.count(existing, "photo")); adding \(files.count) would pass the limit of \(RecipeVault.maxPhotosPerRecipe)")
            }
            let sender = try await PhotoSender.make(connection: connection, asIs: asIs, keepMetadata: keepMetadata)
            if let note = sender.note { printNote(note) }
            var images: [(file: String, bytes: Data, fitting: PhotoFitting?)] = []
            for file in files {
                let (bytes, fitting) = try await sender.prepare(try readFile(file, what: "a photo"), file: file)
                images.append((file, bytes, fitting))
            }
            var photos: [PhotoInfo] = []
            for image in images {
                photos = try await client.send(PhotoOps.Add.self, .init(recipeID: id), frames: [image.bytes]).body.photos
            }
            let fitted = images.compactMap { image in image.fitting.map { Result.Fitted(file: image.file, fitting: $0) } }
            if connection.json { return try Output.json(Result(photos: photos, fitted: fitted)) }
            for image in fitted { print("\(image.file): \(image.fitting.summary)") }
            print("The recipe has \(Output.count(photos.count, "photo")) now.")
        }
    }
}

struct ListPhotos: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List a recipe's photos, numbered from 1.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Recipe id, short id or name.") var recipe: String

    func run() async throws {
        try await connection.show {
            let client = try connection.storageClient()
            let id = try await RecipeReference.resolve(recipe, using: client)
            return try await client.call(PhotoOps.ListPhotos.self, .init(recipeID: id))
        } text: { photos in
            if photos.photos.isEmpty { return print("No photos.") }
            Output.table(["N", "TYPE", "SIZE", "SHA-256"], photos.photos.map {
                ["\($0.position + 1)", $0.mediaType, ImageKind.formatBytes($0.byteCount), String($0.sha256.prefix(16))]
            })
        }
    }
}

struct GetPhoto: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "get", abstract: "Save photo N of a recipe to a file.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Recipe id, short id or name.") var recipe: String
    @Argument(help: "Photo number, from 1.") var number: Int
    @Option(name: .shortAndLong, help: "The file to write.") var output: String

    func validate() throws {
        guard (1...RecipeVault.maxPhotosPerRecipe).contains(number) else { throw ValidationError("photo numbers are 1 to 10; got \(number)") }
    }

    func run() async throws {
        try await reportingFailures {
            let client = try connection.storageClient()
            let id = try await RecipeReference.resolve(recipe, using: client)
            let reply = try await client.send(PhotoOps.Get.self, .init(recipeID: id, position: number - 1))
            guard let bytes = reply.frames.first else { throw CLIError("the photo came without its bytes", status: ExitStatus.internalFailure) }
            do { try bytes.write(to: URL(fileURLWithPath: output), options: .atomic) } catch {
                let problem = FileProblem(error)
                throw CLIError(problem?.sentence ?? "cannot write \(output): \(error)", status: problem?.status ?? ExitStatus.cannotWrite)
            }
            if connection.json { return try Output.json(reply.body) }
            print("Saved photo \(number) (\(reply.body.photo.mediaType), \(ImageKind.formatBytes(bytes.count))) to \(output).")
        }
    }
}

struct MovePhoto: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "move", abstract: "Move photo N to place M.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Recipe id, short id or name.") var recipe: String
    @Argument(help: "Photo number, from 1.") var number: Int
    @Argument(help: "Its new place, from 1.") var place: Int

    func run() async throws {
        try await connection.show {
            let client = try connection.storageClient()
            let id = try await RecipeReference.resolve(recipe, using: client)
            let photos = try await client.call(PhotoOps.ListPhotos.self, .init(recipeID: id)).photos
            let photoID = try photoID(number, in: photos)
            guard (1...photos.count).contains(place) else {
                throw CLIError("the recipe has photos 1 to \(photos.count); photo \(number) can move to place 1 to \(photos.count), not \(place)",
                               status: ExitStatus.refused)
            }
            return try await client.call(PhotoOps.Move.self, .init(recipeID: id, photoID: photoID, position: place - 1))
        } text: { moved in
            print("Moved photo \(number) to place \(place).")
        }
    }
}

struct RemovePhoto: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove photo N.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Recipe id, short id or name.") var recipe: String
    @Argument(help: "Photo number, from 1.") var number: Int

    func run() async throws {
        try await connection.show {
            let client = try connection.storageClient()
            let id = try await RecipeReference.resolve(recipe, using: client)
            return try await client.call(PhotoOps.Remove.self, .init(recipeID: id, photoID: try await photoID(number, of: id, using: client)))
        } text: { left in
            print("Removed photo \(number); \(left.photos.count) left.")
        }
    }
}

/// The id of photo `number` (counted from 1) of a recipe, or the error saying which numbers exist.
func photoID(_ number: Int, of recipeID: UUID, using client: MessageClient) async throws -> UUID {
    try photoID(number, in: try await client.call(PhotoOps.ListPhotos.self, .init(recipeID: recipeID)).photos)
}

/// The id of photo `number` (counted from 1) among a recipe's `photos`, or the error saying which numbers exist.
func photoID(_ number: Int, in photos: [PhotoInfo]) throws -> UUID {
    guard photos.indices.contains(number - 1) else {
        throw CLIError(photos.isEmpty ? "the recipe has no photos" : "the recipe has photos 1 to \(photos.count); there is no photo \(number)",
                       status: ExitStatus.notFound)
    }
    return photos[number - 1].id
}
