import Foundation
import Logging
import Messaging
import RecipeModel
import RecipeProtocol
import StorageService
import RecipeStore
import Testing
import ReplicaSync
import ZeroMQ
import Crypto

/// Runs the storage service on an ephemeral port over a temporary data folder.
func withStorage<T: Sendable>(seedSamples: Bool = true, _ body: (MessageClient) async throws -> T) async throws -> T {
    try await withStorageService(seedSamples: seedSamples) { client, _ in try await body(client) }
}

/// Like `withStorage`, also handing over the service (for its publisher); on `folder` when given (left there),
/// else on a temporary folder removed afterwards.
func withStorageService<T: Sendable>(
    seedSamples: Bool = true, folder given: URL? = nil, _ body: (MessageClient, StorageService) async throws -> T
) async throws -> T {
    let folder = given ?? FileManager.default.temporaryDirectory.appendingPathComponent("rv-wire-\(UUID().uuidString)")
    defer { if given == nil { try? FileManager.default.removeItem(at: folder) } }
    var configuration = StorageConfiguration()
    configuration.bindEndpoint = "tcp://127.0.0.1:*"
    configuration.publishEndpoint = "tcp://127.0.0.1:*"
    configuration.dataFolder = folder
    configuration.seedSamples = seedSamples
    let service = try await StorageService(configuration: configuration, logger: Logger(label: "test"))
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await service.server.run() }
        defer { service.server.stop() }
        var clientConfiguration = MessageClient.Configuration(endpoint: try await service.server.boundEndpoint, serviceName: "storage")
        clientConfiguration.timeout = .seconds(10)
        let result = try await body(try MessageClient(configuration: clientConfiguration), service)
        service.server.stop()
        try await group.waitForAll()
        await service.publisher.close()
        // A store whose files were removed under it (a test of that) may not close cleanly.
        if given == nil { try service.store.close() } else { try? service.store.close() }
        return result
    }
}

@Suite("recipe-storage operations through real sockets")
struct StorageWireTests {
    @Test("create, get, list, search, update, delete round-trip over the wire")
    func recipeLifecycle() async throws {
        try await withStorage { client async throws in
            let id = UUID()
            let draft = RecipeDraft(name: "Tomato Soup", ingredients: [.init(text: "1 kg tomatoes"), .init(text: "1 onion, diced")],
                                    instructions: [.init(text: "Simmer and blend.")], servings: 4, prepTime: "PT10M", cookTime: "PT30M",
                                    recipeCuisine: "Italian")
            let created = try await client.call(RecipeOps.Create.self, .init(id: id, recipe: draft))
            #expect(created.created && created.recipe.id == id)
            #expect(created.recipe.ingredients.map(\.food) == ["tomato", "onion"])

            let detail = try await client.call(RecipeOps.Get.self, .init(id: id, servings: 2))
            #expect(detail.recipe == created.recipe)
            #expect(detail.scaledIngredients?.first?.quantity == 0.5)

            let italian = try await client.call(RecipeOps.List.self, RecipeListQuery(cuisine: "italian"))
            #expect(Set(italian.recipes.map(\.name)) == ["Tomato Soup", "Classic Tomato Pasta"])
            let hits = try await client.call(RecipeOps.Search.self, .init(text: "soup tom"))
            #expect(hits.hits.first?.recipe.id == id)

            var edit = RecipeDraft(created.recipe)
            edit.notes = "Add basil."
            let updated = try await client.call(RecipeOps.Update.self, .init(id: id, expectedVersion: 1, recipe: edit))
            #expect(updated.version == 2)
            let conflict = await #expect(throws: ServiceError.self) {
                _ = try await client.call(RecipeOps.Update.self, .init(id: id, expectedVersion: 1, recipe: edit))
            }
            #expect(conflict?.code == .conflict)

            #expect(try await client.call(RecipeOps.Delete.self, ByID(id: id)).deleted)
            let gone = await #expect(throws: ServiceError.self) { _ = try await client.call(RecipeOps.Get.self, .init(id: id)) }
            #expect(gone?.code == .notFound)
        }
    }

    @Test("starters, samples, books, catalogue, cook log, can-make and stats over the wire")
    func everythingElse() async throws {
        try await withStorage { client async throws in
            let stats = try await client.call(StorageOps.Stats.self, Empty())
            #expect(stats.recipes == 8 && stats.books == 3 && stats.ingredients == 43 && stats.starters == 8)
            #expect(try await client.call(StorageOps.LoadSamples.self, Empty()).loaded == false, "never twice")

            let pasta = try await client.call(RecipeOps.List.self, RecipeListQuery(cuisine: "Italian")).recipes[0]
            let readOnly = await #expect(throws: ServiceError.self) { _ = try await client.call(RecipeOps.Delete.self, ByID(id: pasta.id)) }
            #expect(readOnly?.code == .starterReadOnly)
            let copy = try await client.call(RecipeOps.Duplicate.self, .init(id: pasta.id, name: "My Tomato Pasta"))
            #expect(copy.origin == .custom && copy.name == "My Tomato Pasta")
            #expect(try await client.call(RecipeOps.Favorite.self, .init(id: copy.id, isFavorite: true)).isFavorite)
            #expect(try await client.call(RecipeOps.Rate.self, .init(id: copy.id, rating: 4)).rating == 4)
            let badRating = await #expect(throws: ServiceError.self) { _ = try await client.call(RecipeOps.Rate.self, .init(id: copy.id, rating: 9)) }
            #expect(badRating?.code == .invalidArgument)

            let books = try await client.call(BookOps.List.self, .init()).books
            #expect(books.map(\.book.title) == ["Ottolenghi Simple", "Salt, Fat, Acid, Heat", "The Wok"])
            let wok = try #require(books.first { $0.book.title == "The Wok" })
            let wokDetail = try await client.call(BookOps.Get.self, .init(id: wok.book.id))
            #expect(wokDetail.recipes.map(\.name) == ["Egg Fried Rice", "Chicken Stir-Fry"] && wokDetail.recipeCount == 2)
            // A limit: the first recipes in the same order, and how many the book holds; 0 for the book alone.
            let first = try await client.call(BookOps.Get.self, .init(id: wok.book.id, limit: 1))
            #expect(first.recipes.map(\.name) == ["Egg Fried Rice"] && first.recipeCount == 2 && first.book == wok.book)
            let bare = try await client.call(BookOps.Get.self, .init(id: wok.book.id, limit: 0))
            #expect(bare.recipes.isEmpty && bare.recipeCount == 2 && bare.book == wok.book)
            let tooMany = await #expect(throws: ServiceError.self) {
                _ = try await client.call(BookOps.Get.self, .init(id: wok.book.id, limit: 201))
            }
            #expect(tooMany?.code == .invalidArgument && tooMany?.message == "limit is 201; it must be 0 (the book alone) to 200, or left out for every recipe")
            let newBook = try await client.call(BookOps.Create.self, .init(title: "Ferment", author: nil))
            #expect(try await client.call(BookOps.Update.self, .init(id: newBook.id, title: "Fermentation")).title == "Fermentation")
            #expect(try await client.call(BookOps.Delete.self, ByID(id: newBook.id)).deleted)

            #expect(try await client.call(IngredientOps.Find.self, .init(name: "green onions")).name == "spring onion")
            let upserted = try await client.call(IngredientOps.Upsert.self, .init(name: "Leeks", category: .vegetable, aliases: ["leek"]))
            #expect(upserted.name == "leek" && upserted.aliases.isEmpty, "an alias equal to the name is dropped")
            #expect(try await client.call(IngredientOps.List.self, .init(category: .fruit)).ingredients.map(\.name) == ["cherry", "lemon", "lime"])

            let cooked = try await client.call(CookLogOps.Add.self, .init(recipeID: copy.id, rating: 5, note: "Perfect"))
            #expect(cooked.recipeName == "My Tomato Pasta")
            #expect(try await client.call(CookLogOps.List.self, .init(recipeID: copy.id)).entries == [cooked])
            #expect(try await client.call(RecipeOps.Get.self, .init(id: copy.id)).timesCooked == 1)
            #expect(try await client.call(CookLogOps.Delete.self, ByID(id: cooked.id)).deleted)

            let canMake = try await client.call(RecipeOps.CanMake.self, .init(have: ["chickpeas", "tahini", "lemon", "garlic", "cumin"], maxMissing: 1))
            #expect(canMake.results.map(\.recipe.name) == ["Hummus from Scratch"])
            #expect(canMake.results.first?.missing == ["paprika"])
            #expect(canMake.matching == 1)
            let many = try await client.call(RecipeOps.CanMake.self, .init(have: ["eggs"], maxMissing: 50, limit: 3))
            #expect(many.results.count == 3 && many.matching == 9, "the samples and the copy qualify; three are sent")
            let wordy = await #expect(throws: ServiceError.self) {
                _ = try await client.call(RecipeOps.Search.self, .init(text: (0..<40).map { "w\($0)" }.joined(separator: " ")))
            }
            #expect(wordy?.code == .invalidArgument && wordy?.message.contains("at most 32") == true)
        }
    }

    @Test("bad bodies get invalid_body naming the field; the service keeps serving")
    func badBodies() async throws {
        try await withStorage(seedSamples: false) { client async throws in
            let missingName = await #expect(throws: ServiceError.self) {
                _ = try await client.call(UntypedCreate.self, .init(recipe: ["description": "no name"]))
            }
            #expect(missingName?.code == .invalidBody)
            #expect(missingName?.message == "body.recipe.name is missing")
            // A field a recipe does not have is named, never dropped: the recipe would be stored without it.
            for (field, hint) in [("ingredient", "; use ingredients"), ("recipeIngredient", "; use ingredients"), ("colour", "")] {
                let unknown = await #expect(throws: ServiceError.self) {
                    _ = try await client.call(UntypedCreate.self, .init(recipe: ["name": "Soup", field: "1 egg"]))
                }
                #expect(unknown?.code == .invalidBody)
                #expect(unknown?.message.hasPrefix("body.recipe.\(field) is not valid: a recipe has no such field\(hint) (its fields: name, ingredients") == true,
                        "\(unknown?.message ?? "")")
            }
            // So is a misspelt field of any request: a list would otherwise come back at its default length.
            let misspelt = await #expect(throws: ServiceError.self) { _ = try await client.call(UntypedList.self, .init(limt: 5)) }
            #expect(misspelt?.code == .invalidBody)
            #expect(misspelt?.message.hasPrefix("body.limt is not valid: there is no such field here; did you mean limit? (the fields here: ") == true,
                    "\(misspelt?.message ?? "")")
            let notUUID = await #expect(throws: ServiceError.self) { _ = try await client.call(UntypedGet.self, .init(id: "seven")) }
            #expect(notUUID?.code == .invalidBody)
            // In the product's words, saying what is allowed (Foundation's and Swift's named their types: "Attempted to
            // decode UUID from invalid UUID string.", "Cannot initialize SourceType from invalid String value bogus").
            #expect(notUUID?.message == "body.id is not valid: it must be an id: a UUID of 36 characters, such as 5A3C0008-0000-4000-8000-000000000000",
                    "\(notUUID?.message ?? "")")
            for (field, allowed) in [("sourceType", "book, url, manual"), ("origin", "starter, custom, imported, conflictedCopy")] {
                let notOne = await #expect(throws: ServiceError.self) {
                    _ = try await client.call(UntypedCreate.self, .init(recipe: ["name": "Soup", field: "bogus"]))
                }
                #expect(notOne?.code == .invalidBody)
                #expect(notOne?.message == "body.recipe.\(field) is not valid: it must be one of \(allowed); got \"bogus\"", "\(notOne?.message ?? "")")
            }
            // A name past any entry's is refused without being read through or said back whole.
            let long = await #expect(throws: ServiceError.self) {
                _ = try await client.call(IngredientOps.Find.self, .init(name: String(repeating: "a", count: 100_000)))
            }
            #expect(long?.code == .invalidArgument && (long?.message.count ?? .max) < 300, "\(long?.message.prefix(300) ?? "")")
            #expect(try await client.call(StorageOps.Stats.self, Empty()).recipes == 0)
        }
    }

    @Test("an imported recipe's sameAs is held to 16 addresses of at most a line each: 250,000 of them were SQLite's \"too many SQL variables\", an internal error; nothing is stored")
    func sameAsBounds() async throws {
        try await withStorage(seedSamples: false) { client async throws in
            let draft = RecipeDraft(name: "Pie", website: "https://example.com/pie")
            for (sameAs, said) in [((0..<250_000).map { "https://e.com/\($0)" }, "sameAs names 250000 addresses; it may name at most 16"),
                                   ((0..<17).map { "https://e.com/\($0)" }, "sameAs names 17 addresses; it may name at most 16"),
                                   (["https://e.com/" + String(repeating: "a", count: 1_000)], "sameAs[0] is 1014 characters long")] {
                let refused = await #expect(throws: ServiceError.self) {
                    _ = try await client.call(RecipeOps.SaveImported.self, .init(id: UUID(), recipe: draft, sameAs: sameAs))
                }
                #expect(refused?.code == .invalidArgument && refused?.message.hasPrefix(said) == true, "\(refused?.message.prefix(300) ?? "stored")")
            }
            #expect(try await client.call(StorageOps.Stats.self, Empty()).recipes == 0)
            let sixteen = (0..<16).map { "https://e.com/\($0)" }
            #expect(try await client.call(RecipeOps.SaveImported.self, .init(id: UUID(), recipe: draft, sameAs: sixteen)).outcome == .created)
        }
    }
}

@Suite("Text holding U+0000")
struct NULTextTests {
    /// SQLite's text binding ends a value at U+0000: "a\u{0}b" was stored as "a" (and "\u{0}x" as an empty name, past
    /// validation), with the reply showing the cut value as if it were what was sent.
    @Test("is refused in any request, naming the field, and nothing is stored; a literal backslash-u0000 is text")
    func refusedAnywhere() async throws {
        try await withStorage(seedSamples: false) { client async throws in
            func refused(_ call: () async throws -> Void) async -> String? {
                let error = await #expect(throws: ServiceError.self) { try await call() }
                #expect(error?.code == .invalidBody)
                return error?.message
            }
            let nul = "\u{0}"
            var message = await refused { _ = try await client.call(RecipeOps.Create.self, .init(recipe: RecipeDraft(name: "\(nul)Hidden"))) }
            #expect(message == "body.recipe.name holds the NUL character (\\u0000), which no text may contain; remove it")
            message = await refused {
                _ = try await client.call(RecipeOps.Create.self, .init(recipe: RecipeDraft(name: "Eggs", ingredients: [.init(text: "2 eggs"), .init(text: "1 egg\(nul)yolk")])))
            }
            #expect(message?.hasPrefix("body.recipe.ingredients[1].text holds the NUL character") == true, "\(message ?? "")")
            message = await refused { _ = try await client.call(RecipeOps.Create.self, .init(recipe: RecipeDraft(name: "Eggs", keywords: ["k\(nul)"]))) }
            #expect(message?.hasPrefix("body.recipe.keywords[0] holds") == true, "\(message ?? "")")
            message = await refused { _ = try await client.call(BookOps.Create.self, .init(title: "Book\(nul)")) }
            #expect(message?.hasPrefix("body.title holds") == true, "\(message ?? "")")
            message = await refused { _ = try await client.call(RecipeOps.Search.self, .init(text: "soup\(nul)")) }
            #expect(message?.hasPrefix("body.text holds") == true, "\(message ?? "")")
            #expect(try await client.call(StorageOps.Stats.self, Empty()).recipes == 0, "nothing was stored")
            #expect(try await client.call(BookOps.List.self, .init()).books.isEmpty)

            // The six characters \u0000 written as text (an escaped backslash on the wire) are kept as they are.
            let literal = #"C:\u0000 and \\u0000"#
            let created = try await client.call(RecipeOps.Create.self, .init(recipe: RecipeDraft(name: literal, description: literal)))
            #expect(created.recipe.name == literal && created.recipe.description == literal)
            #expect(try await client.call(RecipeOps.Get.self, .init(id: created.recipe.id)).recipe.name == literal)
        }
    }
}

/// `recipe.create` with a free-form recipe object, to send what a typed client cannot.
enum UntypedCreate: WireOperation {
    static let name = "recipe.create"
    static let isWrite = true
    struct Request: Codable, Sendable { var recipe: [String: String] }
    typealias Response = RecipeOps.Create.Response
}

/// `recipe.list` with a misspelt limit.
enum UntypedList: WireOperation {
    static let name = "recipe.list"
    static let isWrite = false
    struct Request: Codable, Sendable { var limt: Int }
    typealias Response = RecipePage
}

/// `recipe.get` with any id text.
enum UntypedGet: WireOperation {
    static let name = "recipe.get"
    static let isWrite = false
    struct Request: Codable, Sendable { var id: String }
    typealias Response = RecipeDetail
}

@Suite("Change notices")
struct ChangeNoticeTests {
    @Test("each committed write is announced on the PUB socket; reads and failed writes are not")
    func notices() async throws {
        try await withStorageService(seedSamples: false) { client, service async throws in
            let subscriber = try Subscriber(service.publisher.endpoint)
            // A subscription takes a moment to reach the publisher: write until a notice arrives (within 30 s: a
            // loaded full run's other tests hold the task pool the writes and notices go through for tens of seconds).
            var notice: ChangeNotice?
            let deadline = ContinuousClock.now + .seconds(30)
            while notice == nil && ContinuousClock.now < deadline {
                _ = try await client.call(BookOps.Create.self, .init(title: "Notes"))
                notice = try await subscriber.next(timeout: .milliseconds(100))
            }
            #expect(notice?.op == "book.create")
            while try await subscriber.next(timeout: .milliseconds(100)) != nil {}

            _ = try await client.call(BookOps.List.self, .init())
            _ = try? await client.call(RecipeOps.Rate.self, .init(id: UUID(), rating: 3))
            #expect(try await subscriber.next(timeout: .milliseconds(300)) == nil, "no notice for a read or a failed write")
            let recipe = try await client.call(RecipeOps.Create.self, .init(recipe: RecipeDraft(name: "Soup"))).recipe
            let created = try await subscriber.next(timeout: .seconds(5))
            #expect(created?.op == "recipe.create")
            _ = try await client.call(RecipeOps.Delete.self, ByID(id: recipe.id))
            let deleted = try await subscriber.next(timeout: .seconds(5))
            #expect(deleted?.op == "recipe.delete")
            #expect((deleted?.seq ?? 0) > (created?.seq ?? 0))
        }
    }
}

/// A SUB socket on its own thread.
actor Subscriber {
    private let executor = ThreadExecutor(name: "test subscriber")
    private let context: Context
    private let socket: Socket
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    init(_ endpoint: String) throws {
        context = try Context()
        socket = try Socket(context, .subscribe)
        try socket.subscribe(Array(ChangePublisher.topic.utf8))
        try socket.connect(endpoint)
    }

    deinit { executor.shutdown() }

    func next(timeout: Duration) throws -> ChangeNotice? {
        try socket.setReceiveTimeout(timeout)
        guard let message = try socket.receive(), message.frames.count == 2 else { return nil }
        return try WireCodec.makeDecoder().decode(ChangeNotice.self, from: message.frames[1])
    }
}

@Suite("Photos through real sockets")
struct PhotoWireTests {
    @Test("add a 1.9 MB photo in a binary frame and get it back byte-exact; limits answer with their codes")
    func photoRoundTrip() async throws {
        try await withStorage(seedSamples: false) { client async throws in
            let id = try await client.call(RecipeOps.Create.self, .init(recipe: RecipeDraft(name: "Bread"))).recipe.id
            var bytes = Data([0xFF, 0xD8, 0xFF, 0xE1])
            bytes.append(contentsOf: (4..<1_900_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) })
            let added = try await client.send(PhotoOps.Add.self, .init(recipeID: id), frames: [bytes]).body
            #expect(added.photos.count == 1 && added.photos[0].mediaType == "image/jpeg")
            let got = try await client.send(PhotoOps.Get.self, .init(recipeID: id, position: 0))
            #expect(got.frames == [bytes])
            #expect(got.body.photo.byteCount == 1_900_000)

            let tooLarge = await #expect(throws: ServiceError.self) {
                _ = try await client.send(PhotoOps.Add.self, .init(recipeID: id), frames: [Data([0xFF, 0xD8, 0xFF]) + Data(count: 2_100_000)])
            }
            #expect(tooLarge?.code == .photoTooLarge)
            let notImage = await #expect(throws: ServiceError.self) {
                _ = try await client.send(PhotoOps.Add.self, .init(recipeID: id), frames: [Data("hello".utf8)])
            }
            #expect(notImage?.code == .unsupportedImage)
            let noFrame = await #expect(throws: ServiceError.self) { _ = try await client.send(PhotoOps.Add.self, .init(recipeID: id)) }
            #expect(noFrame?.code == .invalidBody)
            let removed = try await client.call(PhotoOps.Remove.self, .init(recipeID: id, photoID: added.photos[0].id))
            #expect(removed.photos.isEmpty)
            #expect(try await client.call(PhotoOps.ListPhotos.self, .init(recipeID: id)).photos.isEmpty)
        }
    }
}

@Suite("Protocol reference")
struct ProtocolReferenceTests {
    @Test("every operation recipe-storage answers is documented in docs/PROTOCOL.md")
    func documented() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-doc-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try RecipeStore(folder: folder)
        defer { try? store.close() }
        var routes = Routes()
        routes.addSystemOperations(service: "recipe-storage")
        routes.addStorageOperations(store: store)
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/PROTOCOL.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        #expect(routes.operations.count >= 28)
        for op in routes.operations {
            #expect(text.contains("`\(op)`"), "docs/PROTOCOL.md does not document \(op)")
            // Its kind says whether a repeat of its id runs again: "write" is run once (the sync steps the docs called
            // writes while a retry ran them again answered for a second run).
            let kind = routes.operationsRunOnce.contains(op) ? "write" : "read"
            #expect(text.contains("| `\(op)` | \(kind) |") || text.contains("### `\(op)` (\(kind))"), "docs/PROTOCOL.md does not list \(op) as a \(kind)")
        }
    }
}

@Suite("sync.putPhotos through real sockets")
struct PhotoBatchWireTests {
    private func jpeg(_ seed: UInt8, count: Int = 3_000) -> Data {
        Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data((4..<count).map { UInt8(truncatingIfNeeded: $0 &* Int(seed) &+ Int(seed)) })
    }

    @Test("a batch arrives as frames and is stored; a count out of range or a missing frame is refused with what is allowed")
    func batchOverTheWire() async throws {
        try await withStorage(seedSamples: false) { client in
            let blobs = (1...3).map { jpeg(UInt8($0)) }
            let hashes = blobs.map(PhotoBlobsHash.of)
            let entries = hashes.indices.map { SyncOps.PutPhotos.Entry(sha256: hashes[$0], photo: FrameReference(frame: $0 + 1)) }
            let reply = try await client.send(SyncOps.PutPhotos.self, .init(photos: entries), frames: blobs)
            #expect(reply.body.stored == 3)
            #expect(try await client.call(SyncOps.MissingPhotos.self, .init(sha256: hashes)).missing.isEmpty)
            let again = try await client.send(SyncOps.PutPhotos.self, .init(photos: entries), frames: blobs)
            #expect(again.body.stored == 0)

            let none = await #expect(throws: ServiceError.self) { try await client.call(SyncOps.PutPhotos.self, .init(photos: [])) }
            #expect(none?.code == .invalidArgument && none?.message.contains("1 to 15") == true)
            let fresh = jpeg(9)
            let missingFrame = await #expect(throws: ServiceError.self) {
                try await client.call(SyncOps.PutPhotos.self, .init(photos: [.init(sha256: PhotoBlobsHash.of(fresh), photo: FrameReference(frame: 1))]))
            }
            #expect(missingFrame?.code == .invalidBody)
            #expect(try await client.call(SyncOps.MissingPhotos.self, .init(sha256: [PhotoBlobsHash.of(fresh)])).missing.count == 1)

            // Nine photos of 1.9 MB each: every one within the photo limit, the message within the service's,
            // and together over the 16 MiB a batch may carry.
            let large = (11...19).map { jpeg(UInt8($0), count: 1_900_000) }
            let largeHashes = large.map(PhotoBlobsHash.of)
            let largeEntries = largeHashes.indices.map { SyncOps.PutPhotos.Entry(sha256: largeHashes[$0], photo: FrameReference(frame: $0 + 1)) }
            let tooMuch = await #expect(throws: ServiceError.self) {
                try await client.send(SyncOps.PutPhotos.self, .init(photos: largeEntries), frames: large)
            }
            #expect(tooMuch?.code == .invalidArgument && tooMuch?.message.contains("17100000 bytes") == true
                    && tooMuch?.message.contains("at most \(SyncOps.PutPhotos.maxBytes) bytes") == true, "\(tooMuch?.message ?? "")")
            #expect(try await client.call(SyncOps.MissingPhotos.self, .init(sha256: largeHashes)).missing.count == 9, "none was stored")
            let fits = try await client.send(SyncOps.PutPhotos.self, .init(photos: Array(largeEntries.prefix(8))), frames: Array(large.prefix(8)))
            #expect(fits.body.stored == 8)
        }
    }

    @Test("a replica endpoint that is not a storage (it does not know sync.info) is said to be one, with where to look")
    func notAStorage() async throws {
        var routes = Routes()
        routes.handle(System.Echo.self) { request, _ in .init(text: request.text) }
        let server = try MessageServer(configuration: .init(endpoint: "tcp://127.0.0.1:*", serviceName: "recipe-worker"),
                                       routes: routes, logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            defer { server.stop() }
            let endpoint = try await server.boundEndpoint
            let replica = try RemoteReplica(endpoint: endpoint, logger: Logger(label: "test"))
            let error = await #expect(throws: ServiceError.self) { try await replica.info() }
            #expect(error?.code == .unknownOp)
            #expect(error?.message == "\(endpoint) is recipe-worker, not recipe-storage (it does not answer sync.info); "
                    + "set recipe-worker's --storage or --replica to recipe-storage's endpoint", "\(error?.message ?? "")")
            server.stop()
            try await group.waitForAll()
        }
    }

    @Test("a storage that does not know sync.putPhotos gets the batch one photo at a time")
    func olderStorageGetsOneAtATime() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-wire-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try RecipeStore(folder: folder)
        var routes = Routes()
        routes.handle(SyncOps.PutPhoto.self) { request, context in
            .init(stored: try store.putPhotoBlob(sha256: request.sha256, bytes: try context.frame(request.photo)))
        }
        let server = try MessageServer(configuration: .init(endpoint: "tcp://127.0.0.1:*", serviceName: "older storage"),
                                       routes: routes, logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            defer { server.stop() }
            let replica = try RemoteReplica(endpoint: try await server.boundEndpoint, logger: Logger(label: "test"))
            let blobs = (1...4).map { jpeg(UInt8(20 + $0)) }
            let stored = try await replica.putPhotos(blobs.map { (PhotoBlobsHash.of($0), $0) })
            #expect(stored == 4)
            #expect(try store.missingPhotos(blobs.map(PhotoBlobsHash.of)).isEmpty)
            server.stop()
            try await group.waitForAll()
        }
        try store.close()
    }
}

private enum PhotoBlobsHash {
    static func of(_ bytes: Data) -> String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() }
}

@Suite("Sync rules on the wire: a worker of other rules reads and applies nothing")
struct SyncRulesWireTests {
    @Test("sync.changes and sync.apply from a worker saying older, no or newer sync rules are refused as unsupported_version, saying why; nothing is applied and the cursor stays",
          arguments: [nil, 1, SyncRules.current - 1, SyncRules.current + 1] as [Int?])
    func otherRulesRefused(rules: Int?) async throws {
        // Another replica's change, to send as a worker would.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-rules-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let other = try RecipeStore(folder: folder)
        let id = UUID()
        _ = try await other.createRecipe(id: id, RecipeDraft(name: "From the other replica", ingredients: [.init(text: "3 pears")]))
        let page = try await other.syncChanges(since: 0, exclude: nil, limit: 100)
        let from = try await other.syncInfo().replicaID
        try other.close()

        try await withStorage(seedSamples: false) { client in
            let said = rules ?? 1
            let upgrade = said < SyncRules.current ? "upgrade the recipe-worker sending these changes" : "upgrade this recipe-storage"
            let applying = await #expect(throws: ServiceError.self) {
                try await client.call(SyncOps.Apply.self, .init(from: from, records: page.records, cursor: page.next, rules: rules))
            }
            #expect(applying?.code == .unsupportedVersion)
            #expect(applying?.message.hasPrefix("the recipe-worker sending these changes syncs by sync rules \(said) (") == true
                    && applying?.message.contains("this recipe-storage by \(SyncRules.current)") == true
                    && applying?.message.hasSuffix(upgrade) == true, "\(applying?.message ?? "")")
            let reading = await #expect(throws: ServiceError.self) {
                try await client.call(SyncOps.Changes.self, .init(since: 0, limit: 10, rules: rules))
            }
            #expect(reading?.code == .unsupportedVersion && reading?.message.hasPrefix("the recipe-worker reading this storage's changes syncs by") == true,
                    "\(reading?.message ?? "")")
            let missing = await #expect(throws: ServiceError.self) { try await client.call(RecipeOps.Get.self, .init(id: id)) }
            #expect(missing?.code == .notFound, "nothing of the refused page is stored")
            #expect(try await client.call(SyncOps.Cursor.self, .init(peer: from)).seq == 0)
            // A count of what is waiting says nothing of merging: it answers whatever the rules.
            #expect(try await client.call(SyncOps.Pending.self, .init(since: 0, rules: rules)).count == 0)

            // The same page from a worker of this release's rules applies.
            let applied = try await client.call(SyncOps.Apply.self, .init(from: from, records: page.records, cursor: page.next))
            #expect(applied.changed == 1)
            #expect(try await client.call(RecipeOps.Get.self, .init(id: id)).recipe.name == "From the other replica")
            #expect(try await client.call(SyncOps.Cursor.self, .init(peer: from)).seq == page.next)
            #expect(try await client.call(SyncOps.Changes.self, .init(since: 0, limit: 10)).records.count == 1)
            #expect(try await client.call(SyncOps.Info.self, .init()).rules == SyncRules.current)
        }
    }
}

@Suite("What a replica has seen, on the wire")
struct SeenWritesWireTests {
    @Test("after a page of another replica's is applied, sync.cursor names that replica's newest write in `seen` and among `seenWrites`; sync.changes reads with them, and refuses a list naming one replica twice as invalid_argument, saying so")
    func seenWritesOnTheWire() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-seen-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let other = try RecipeStore(folder: folder)
        _ = try await other.createRecipe(id: UUID(), RecipeDraft(name: "From the other replica"))
        _ = try await other.createBook(id: UUID(), title: "Theirs", author: nil)
        let page = try await other.syncChanges(since: 0, exclude: nil, limit: 100)
        let from = try await other.syncInfo().replicaID
        try other.close()

        try await withStorage(seedSamples: false) { client in
            _ = try await client.call(SyncOps.Apply.self, .init(from: from, records: page.records, cursor: page.next))
            let cursor = try await client.call(SyncOps.Cursor.self, .init(peer: from))
            let seen = try #require(cursor.seen)
            #expect(seen.write == 2 && seen.stamp.hasSuffix(".\(from)"))
            #expect(cursor.seenWrites == [seen])
            let read = try await client.call(SyncOps.Changes.self, .init(since: 0, exclude: from, limit: 10, seen: nil, seenWrites: cursor.seenWrites))
            #expect(read.seen == seen)
            let refused = await #expect(throws: ServiceError.self) {
                try await client.call(SyncOps.Changes.self, .init(since: 0, limit: 10, seenWrites: [seen, seen]))
            }
            #expect(refused?.code == .invalidArgument && refused?.message == "seenWrites[1] names replica \(from) again; it holds one write per replica",
                    "\(refused?.message ?? "")")
        }
    }
}

@Suite("Blobs no replica could send, on the wire")
struct UnavailablePhotosWireTests {
    @Test("sync.info says the storage takes unavailablePhotos; a record naming such a blob is applied without it and the blob listed lost, one naming a blob left out of the list is held")
    func appliedWithoutTheBlob() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-unavailable-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let other = try RecipeStore(folder: folder)
        let (kept, waiting) = (UUID(), UUID())
        var hashes: [String] = []
        for (id, seed) in [(kept, UInt8(41)), (waiting, UInt8(42))] {
            _ = try await other.createRecipe(id: id, RecipeDraft(name: "Bread \(seed)"))
            let bytes = Data([0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: seed, count: 600) + [0xFF, 0xD9])
            hashes.append(try await other.addPhoto(recipeID: id, bytes: bytes, position: nil)[0].sha256)
        }
        let page = try await other.syncChanges(since: 0, exclude: nil, limit: 100)
        let from = try await other.syncInfo().replicaID
        try other.close()

        try await withStorage(seedSamples: false) { client in
            #expect(try await client.call(SyncOps.Info.self, .init()).takesUnavailablePhotos == true)
            let applied = try await client.call(SyncOps.Apply.self, .init(from: from, records: page.records, cursor: page.next,
                                                                          unavailablePhotos: [hashes[0]]))
            #expect(applied.changed == 1 && applied.held == 1)
            #expect(try await client.call(RecipeOps.Get.self, .init(id: kept)).recipe.photos.map(\.sha256) == [hashes[0]])
            let info = try await client.call(SyncOps.Info.self, .init())
            #expect(info.lostPhotos == [hashes[0]])
            #expect(info.held?.map(\.id) == [waiting.uuidString] && info.held?.first?.missingPhotos == [hashes[1]])
            let refused = await #expect(throws: ServiceError.self) {
                try await client.call(SyncOps.Apply.self, .init(from: from, records: [], cursor: nil, unavailablePhotos: ["not a hash"]))
            }
            #expect(refused?.code == .invalidArgument
                    && refused?.message == #"unavailablePhotos[0] "not a hash" is not a SHA-256 (64 lowercase hex digits)"#)
            // The held one goes once a sync says its blob cannot be had either.
            let later = try await client.call(SyncOps.Apply.self, .init(from: from, records: [], cursor: nil, unavailablePhotos: [hashes[1]]))
            #expect(later.changed == 1 && later.held == 0)
            #expect(Set(try await client.call(SyncOps.Info.self, .init()).lostPhotos ?? []) == Set(hashes))
        }
    }
}

@Suite("Replication steps sent again under their id")
struct RetriedSyncStepTests {
    /// The worker's client sends a request again when its reply is late (a page's apply on a loaded machine). The first
    /// run may have finished meanwhile: the retry must be told what that run did. Run a second time, an apply said "no
    /// change" — or, on a disk the first run had filled, `storage_full` and "nothing of it was kept" — for changes that
    /// were kept (CI, a page of 67 recipes on a replica whose disk filled).
    @Test("sync.apply, sync.putPhoto, sync.putPhotos, sync.snapshot and sync.snapshotDone sent again under their id are given their one run's reply; a new id runs again")
    func retriedStepsRunOnce() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-retried-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let other = try RecipeStore(folder: folder)
        _ = try await other.createRecipe(id: UUID(), RecipeDraft(name: "From the other replica", ingredients: [.init(text: "2 leeks")]))
        let page = try await other.syncChanges(since: 0, exclude: nil, limit: 100)
        let from = try await other.syncInfo().replicaID
        try other.close()

        try await withStorage(seedSamples: false) { client in
            let apply = SyncOps.Apply.Request(from: from, records: page.records, cursor: page.next)
            let applied = try await client.call(SyncOps.Apply.self, apply, requestID: "apply-1")
            #expect(applied.changed == 1)
            #expect(try await client.call(SyncOps.Apply.self, apply, requestID: "apply-1") == applied, "the retry is told the page changed a recipe")
            #expect(try await client.call(SyncOps.Apply.self, apply).changed == 0, "a new request merges again: nothing more changes")

            // (A JPEG's first bytes: a replica takes image files only.)
            let bytes = Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data("photo bytes \(UUID())".utf8)
            let hash = PhotoBlobsHash.of(bytes)
            let put = SyncOps.PutPhoto.Request(sha256: hash)
            #expect(try await client.send(SyncOps.PutPhoto.self, put, frames: [bytes], requestID: "put-1").body.stored)
            #expect(try await client.send(SyncOps.PutPhoto.self, put, frames: [bytes], requestID: "put-1").body.stored, "the retry is told it was stored")
            #expect(try await client.send(SyncOps.PutPhoto.self, put, frames: [bytes]).body.stored == false)

            let more = Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data("more photo bytes \(UUID())".utf8)
            let moreHash = PhotoBlobsHash.of(more)
            let puts = SyncOps.PutPhotos.Request(photos: [.init(sha256: moreHash, photo: FrameReference(frame: 1))])
            #expect(try await client.send(SyncOps.PutPhotos.self, puts, frames: [more], requestID: "puts-1").body.stored == 1)
            #expect(try await client.send(SyncOps.PutPhotos.self, puts, frames: [more], requestID: "puts-1").body.stored == 1)

            let snapshot = try await client.call(SyncOps.Snapshot.self, Empty(), requestID: "snapshot-1")
            #expect(try await client.call(SyncOps.Snapshot.self, Empty(), requestID: "snapshot-1") == snapshot, "the retry makes no second copy")
            let done = SyncOps.SnapshotDone.Request(snapshot: snapshot.snapshot)
            #expect(try await client.call(SyncOps.SnapshotDone.self, done, requestID: "done-1").removed)
            #expect(try await client.call(SyncOps.SnapshotDone.self, done, requestID: "done-1").removed, "the retry is told it was removed")
            #expect(try await client.call(SyncOps.SnapshotDone.self, done).removed == false)
        }
    }
}
