import Foundation
import Messaging
import RecipeModel
import RecipeProtocol
import TestHTTPServer
import TestImages
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A recipe-storage and a recipe-worker as real processes, on ephemeral loopback ports.
final class Services: Sendable {
    let storage: ServiceProcess
    let storageEndpoint: String
    let workerArguments: [String]

    init(samples: Bool = false) async throws {
        storage = try ServiceProcess("recipe-storage", ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*",
                                                        "--data", temporaryDataFolder()] + (samples ? ["--seed-samples"] : []))
        storageEndpoint = try await storage.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#)
        workerArguments = ["--bind", "tcp://127.0.0.1:*", "--storage", storageEndpoint, "--connect-timeout", "2", "--fetch-timeout", "10"]
    }

    /// Starts a worker; `allow` is its allow-list.
    /// `onlyAllowed: false` lets it fetch from the public internet too, as a worker does by default.
    func startWorker(allow: [String] = ["127.0.0.1"], extra: [String] = [], onlyAllowed: Bool = true) async throws
        -> (process: ServiceProcess, endpoint: String) {
        let worker = try ServiceProcess("recipe-worker", workerArguments + allow.flatMap { ["--allow-host", $0] } + extra,
                                        environment: ["RECIPES_WORKER_FETCH_ONLY_ALLOWED": onlyAllowed ? "1" : "0"])
        let endpoint = try await worker.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations=import"#)
        return (worker, endpoint)
    }

    func client(_ endpoint: String, timeout: Duration = .seconds(30)) throws -> MessageClient {
        var configuration = MessageClient.Configuration(endpoint: endpoint, serviceName: "test")
        configuration.timeout = timeout
        configuration.attempts = 1
        return try MessageClient(configuration: configuration)
    }

    func stop() async {
        _ = try? await storage.stop()
    }
}

/// The saved pages beside the project: shared/fixtures/recipe-pages and recipe-pages-more.
let fixturesFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/fixtures")
let savedPagesFolder = fixturesFolder.appendingPathComponent("recipe-pages")
let savedPageSets = ["recipe-pages", "recipe-pages-more"]

/// A page with one JSON-LD recipe whose image is `image`.
func recipePage(name: String, ingredients: [String], image: String?) -> String {
    var recipe: [String: Any] = [
        "@context": "https://schema.org", "@type": "Recipe", "name": name, "recipeIngredient": ingredients,
        "recipeInstructions": [["@type": "HowToStep", "text": "Mix everything."]], "recipeYield": "2 servings",
    ]
    if let image { recipe["image"] = image }
    let json = String(decoding: try! JSONSerialization.data(withJSONObject: recipe), as: UTF8.self)
    return "<html><head><script type=\"application/ld+json\">\(json)</script></head><body><h1>\(name)</h1></body></html>"
}

@Suite("recipe-worker: importing web pages end to end", .serialized)
struct WorkerTests {
    @Test("every saved page of both folders is imported through worker and storage (or refused with no_recipe_found)")
    func savedPages() async throws {
        for set in savedPageSets {
            try #require(FileManager.default.fileExists(atPath: fixturesFolder.appendingPathComponent(set).path),
                         "the saved pages belong in shared/fixtures/\(set) beside the project folder (\(fixturesFolder.path))")
        }
        let server = try await TestHTTPServer(pagesFolder: fixturesFolder)
        let services = try await Services()
        let (worker, endpoint) = try await services.startWorker()
        let client = try services.client(endpoint)
        var pages = 0, imported = 0, sameName = 0, noRecipe = 0, withIngredients = 0, unstructured = 0
        for set in savedPageSets {
        let setFolder = fixturesFolder.appendingPathComponent(set)
        for host in try FileManager.default.contentsOfDirectory(atPath: setFolder.path).sorted() where !host.hasPrefix("LICENSE") {
            for file in try FileManager.default.contentsOfDirectory(atPath: setFolder.appendingPathComponent(host).path).sorted()
            where file.hasSuffix(".html") {
                pages += 1
                let url = "\(server.baseURL)/pages/\(set)/\(host)/\(file)"
                do {
                    let result = try await client.call(ImportOps.FromURL.self, .init(url: url))
                    let recipe = try #require(result.recipe)
                    imported += 1
                    #expect(result.outcome == .created)
                    #expect(recipe.website == url && recipe.sourceType == .url && recipe.origin == .imported)
                    if !recipe.ingredients.isEmpty { withIngredients += 1 }
                    if result.readWithoutStructuredData == true {
                        unstructured += 1
                        #expect(recipe.notes?.contains("no schema.org recipe") == true, "\(url): a recipe read from headings says so in its notes")
                    }
                    #expect(!result.photo.added && result.photo.note != nil, "the page's image lives on the web, which is not reachable here")
                    let expectedFile = setFolder.appendingPathComponent(host)
                        .appendingPathComponent(file.replacingOccurrences(of: ".html", with: ".expected.json"))
                    let expected = try JSONSerialization.jsonObject(with: Data(contentsOf: expectedFile)) as? [String: Any]
                    if let name = expected?["name"] as? String, name.split(whereSeparator: \.isWhitespace).joined(separator: " ") == recipe.name {
                        sameName += 1
                    }
                } catch let error as ServiceError {
                    #expect(error.code == .noRecipeFound, "\(url): \(error)")
                    #expect(error.message.contains("--html"))
                    noRecipe += 1
                }
            }
        }
        }
        print("worker end to end: \(imported) of \(pages) saved pages imported (\(unstructured) read from headings), \(sameName) with the reference name")
        let references = try savedPageSets.flatMap { set in
            try FileManager.default.subpathsOfDirectory(atPath: fixturesFolder.appendingPathComponent(set).path).filter { $0.hasSuffix(".expected.json") }
        }
        #expect(pages == references.count && pages >= 300)
        #expect(Double(imported) >= 0.98 * Double(pages) && imported + noRecipe == pages)
        #expect(Double(sameName) >= 0.95 * Double(pages))
        #expect(Double(withIngredients) >= 0.93 * Double(pages))
        #expect(unstructured >= 5, "pages without schema.org are read from their headings")

        // Imported recipes are ordinary recipes: searchable, and "what can I make?" sees their parsed ingredients.
        let storage = try services.client(services.storageEndpoint)
        let stats = try await storage.call(StorageOps.Stats.self, Empty())
        #expect(stats.recipes == imported)
        let pasta = try await storage.call(RecipeOps.Search.self, .init(text: "pasta", limit: 5))
        #expect(!pasta.hits.isEmpty)
        _ = try await worker.stop()
        await services.stop()
        await server.shutdown()
    }

    @Test("importing a page again updates its recipe and keeps the user's notes, rating, favourite and photos")
    func reimport() async throws {
        let server = try await TestHTTPServer()
        let services = try await Services()
        let (worker, endpoint) = try await services.startWorker()
        let client = try services.client(endpoint)
        let storage = try services.client(services.storageEndpoint)
        // A real photo that already fits: the intake stores it byte for byte.
        let image = [UInt8](TestImages.picture(width: 640, height: 480, as: .jpeg(quality: 80)))
        server.route("/photo.jpg", .bytes(image, contentType: "image/jpeg"))
        server.route("/soup", .html(recipePage(name: "Leek Soup", ingredients: ["2 leeks", "1 l stock"], image: "/photo.jpg")))
        let url = "\(server.baseURL)/soup"

        let first = try await client.call(ImportOps.FromURL.self, .init(url: url))
        let created = try #require(first.recipe)
        #expect(first.outcome == .created)
        #expect(first.photo.added && created.photos.count == 1 && created.photos[0].byteCount == image.count)
        #expect(created.ingredients.map(\.food) == ["leek", "stock"])

        // The user makes it theirs.
        var draft = RecipeDraft(created)
        draft.notes = "Add a knob of butter."
        let edited = try await storage.call(RecipeOps.Update.self, .init(id: created.id, expectedVersion: created.version, recipe: draft))
        _ = try await storage.call(RecipeOps.Rate.self, .init(id: edited.id, rating: 5))
        _ = try await storage.call(RecipeOps.Favorite.self, .init(id: edited.id, isFavorite: true))
        let ownPhoto = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 3, count: 400))
        _ = try await storage.send(PhotoOps.Add.self, .init(recipeID: created.id), frames: [ownPhoto])

        // Unchanged page: nothing changes.
        let again = try await client.call(ImportOps.FromURL.self, .init(url: url + "#comments"))
        #expect(again.outcome == .unchanged && again.recipe?.id == created.id)

        // The site edits the recipe.
        server.route("/soup", .html(recipePage(name: "Leek Soup", ingredients: ["3 leeks", "1 l stock", "1 potato"], image: "/photo.jpg")))
        let updated = try await client.call(ImportOps.FromURL.self, .init(url: url + "?utm_source=newsletter"))
        let recipe = try #require(updated.recipe)
        #expect(updated.outcome == .updated && recipe.id == created.id)
        #expect(recipe.ingredients.map(\.text) == ["3 leeks", "1 l stock", "1 potato"])
        #expect(recipe.notes == "Add a knob of butter." && recipe.rating == 5 && recipe.isFavorite)
        #expect(recipe.photos.count == 2, "the user's photo stays and the page's image is not added twice")
        #expect(!updated.photo.added && updated.photo.note?.contains("already") == true)
        #expect(try await storage.call(StorageOps.Stats.self, Empty()).recipes == 1)
        _ = try await worker.stop()
        await services.stop()
        await server.shutdown()
    }

    @Test("a page's phone-sized photo is made to fit; an image that is none or is damaged is skipped with a reason; the recipe is still imported")
    func photoIntake() async throws {
        let server = try await TestHTTPServer()
        let services = try await Services()
        let (worker, endpoint) = try await services.startWorker()
        let client = try services.client(endpoint)
        let storage = try services.client(services.storageEndpoint)
        let phone = EXIF.adding(to: TestImages.picture(width: 3_000, height: 2_000, grain: 24, as: .jpeg(quality: 95)), orientation: 6)
        #expect(phone.count > RecipeVault.maxPhotoBytes)
        server.route("/big.jpg", .bytes([UInt8](phone), contentType: "image/jpeg"))
        server.route("/fake.jpg", .html("<html>not an image</html>"))
        server.route("/broken.jpg", .bytes([UInt8](phone.prefix(phone.count / 2)), contentType: "image/jpeg"))
        server.route("/big", .html(recipePage(name: "Big Photo Cake", ingredients: ["1 cake"], image: "/big.jpg")))
        server.route("/fake", .html(recipePage(name: "Fake Photo Pie", ingredients: ["1 pie"], image: "/fake.jpg")))
        server.route("/broken", .html(recipePage(name: "Broken Photo Flan", ingredients: ["1 flan"], image: "/broken.jpg")))
        server.route("/none", .html(recipePage(name: "No Photo Tart", ingredients: ["1 tart"], image: nil)))

        let big = try await client.call(ImportOps.FromURL.self, .init(url: "\(server.baseURL)/big"))
        let cake = try #require(big.recipe)
        #expect(big.photo.added && cake.photos.count == 1)
        let fitting = try #require(big.photo.fitting)
        #expect(fitting.original.byteCount == phone.count && fitting.stored.byteCount <= RecipeVault.maxPhotoBytes)
        #expect(fitting.changes.contains(.locationRemoved) && fitting.changes.contains(.turnedUpright), "\(fitting.changes)")
        #expect(fitting.summary.hasSuffix("1707×2560 JPEG, turned upright, location removed"), "\(fitting.summary)")
        // What storage holds is the fitted photo: upright, without the location.
        let stored = try await storage.send(PhotoOps.Get.self, .init(recipeID: cake.id, position: 0))
        let storedBytes = try #require(stored.frames.first)
        let read = try #require(TestImages.read(storedBytes))
        #expect(read.width == 1_707 && read.height == 2_560 && !read.hasLocation)
        // Importing the page again finds the same fitted photo: it is not added twice.
        let again = try await client.call(ImportOps.FromURL.self, .init(url: "\(server.baseURL)/big"))
        #expect(again.recipe?.photos.count == 1 && again.photo.note == "the page's image is already one of the recipe's photos")

        let fake = try await client.call(ImportOps.FromURL.self, .init(url: "\(server.baseURL)/fake"))
        #expect(fake.recipe?.photos.isEmpty == true && fake.photo.note?.contains("not a JPEG") == true, "\(fake.photo.note ?? "")")
        let broken = try await client.call(ImportOps.FromURL.self, .init(url: "\(server.baseURL)/broken"))
        #expect(broken.recipe?.photos.isEmpty == true && broken.photo.note?.contains("could not be read") == true, "\(broken.photo.note ?? "")")
        let none = try await client.call(ImportOps.FromURL.self, .init(url: "\(server.baseURL)/none"))
        #expect(none.recipe != nil && none.photo.note == "the page names no image")

        // photo.add through the worker: fitted, then stored; --keep-metadata keeps the location.
        let recipeID = try #require(none.recipe?.id)
        let added = try await client.send(PhotoOps.Add.self, .init(recipeID: recipeID), frames: [phone]).body
        #expect(added.photos.count == 1 && added.photos[0].byteCount <= RecipeVault.maxPhotoBytes)
        #expect(added.fitting?.changes.contains(.locationRemoved) == true)
        let kept = try await client.send(PhotoOps.Add.self, .init(recipeID: recipeID, keepMetadata: true), frames: [phone]).body
        #expect(kept.photos.count == 2 && kept.fitting?.changes.contains(.locationRemoved) == false)
        let keptReply = try await storage.send(PhotoOps.Get.self, .init(recipeID: recipeID, position: 1))
        let keptBytes = try #require(keptReply.frames.first)
        #expect(TestImages.read(keptBytes)?.hasLocation == true)
        // photo.fit hands the fitted photo back without storing it.
        let fit = try await client.send(PhotoOps.Fit.self, .init(), frames: [phone])
        #expect(fit.frames.first?.count == fit.body.fitting.stored.byteCount && fit.body.fitting.stored.width == 1_707)
        // Refused with the reason, and nothing stored.
        let damaged = await #expect(throws: ServiceError.self) {
            _ = try await client.send(PhotoOps.Add.self, .init(recipeID: recipeID), frames: [phone.prefix(phone.count / 2)])
        }
        #expect(damaged?.code == .unreadableImage)
        let bomb = await #expect(throws: ServiceError.self) {
            _ = try await client.send(PhotoOps.Add.self, .init(recipeID: recipeID), frames: [PNGBomb.make(width: 50_000, height: 50_000, rows: 64)])
        }
        #expect(bomb?.code == .photoTooLarge && bomb?.message.contains("50000×50000 pixels") == true)
        #expect(try await storage.call(PhotoOps.ListPhotos.self, .init(recipeID: recipeID)).photos.count == 2)
        // Storage itself keeps its hard limit: an oversized photo sent there directly is refused.
        let direct = await #expect(throws: ServiceError.self) {
            _ = try await storage.send(PhotoOps.Add.self, .init(recipeID: recipeID), frames: [phone])
        }
        #expect(direct?.code == .photoTooLarge && direct?.message.contains("the limit is 2 MB") == true)
        _ = try await worker.stop()
        await services.stop()
        await server.shutdown()
    }

    @Test("--storage-clients: the worker says how many calls to the storage it makes at once, and refuses a count out of range")
    func storageClients() async throws {
        for (arguments, shown) in [([] as [String], "storage-clients=10"), (["--storage-clients", "1"], "storage-clients=1")] {
            let worker = try ServiceProcess("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--concurrency", "6"] + arguments)
            _ = try await worker.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations=import"#)
            #expect(worker.printed.contains(shown), "\(worker.printed)")
            _ = try await worker.stop()
        }
        let refused = try ServiceProcess("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--storage-clients", "0"])
        #expect(try await refused.waitForExit(timeout: .seconds(60)) == 64)
        #expect(refused.printed.contains("--storage-clients must be 1 to 64; got 0"), "\(refused.printed)")
    }

    @Test("recipes import: errors say what happened and what to do; --html and --dry-run")
    func cliImport() async throws {
        let server = try await TestHTTPServer()
        let services = try await Services()
        let (worker, endpoint) = try await services.startWorker()
        let (strict, strictEndpoint) = try await services.startWorker(allow: [], onlyAllowed: false)
        // Every operation the worker answers is in the protocol reference.
        let operations = try await worker.waitForOutput(#"endpoint=tcp://[^ ]+ operations=([a-z. ]+)"#).split(separator: " ")
        let projectRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let reference = try String(contentsOf: projectRoot.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)
        #expect(operations.count >= 6)
        for op in operations { #expect(reference.contains("`\(op)`"), "docs/PROTOCOL.md does not document \(op)") }
        server.route("/page", .html(recipePage(name: "Shakshuka", ingredients: ["4 eggs", "1 can tomatoes"], image: nil)))
        server.route("/plain", .html("<html><body><p>Just a blog post.</p></body></html>"))
        server.route("/wall", .html("<html><title>Just a moment...</title><div id=cf-challenge></div></html>", status: 403))
        let env = ["RECIPES_WORKER": endpoint]

        let blocked = try await recipes(["import", "\(server.baseURL)/page"], storage: services.storageEndpoint,
                                        environment: ["RECIPES_WORKER": strictEndpoint])
        #expect(blocked.status == 65 && blocked.output.contains("loopback") && blocked.output.contains("--allow-host"), "\(blocked.output)")
        #expect(server.requests(to: "/page") == 0)

        let none = try await recipes(["import", "\(server.baseURL)/plain"], storage: services.storageEndpoint, environment: env)
        #expect(none.status == 65 && none.output.contains("no recipe found") && none.output.contains("--html"), "\(none.output)")
        let wall = try await recipes(["import", "\(server.baseURL)/wall"], storage: services.storageEndpoint, environment: env)
        #expect(wall.status == 69 && wall.output.contains("HTTP 403") && wall.output.contains("--html FILE --url URL"), "\(wall.output)")
        server.route("/wall200", .html("<html><head><title>Just a moment...</title></head><body><script src=\"/cdn-cgi/challenge-platform/h/b\"></script></body></html>"))
        let challenge = try await recipes(["import", "\(server.baseURL)/wall200"], storage: services.storageEndpoint, environment: env)
        #expect(challenge.status == 69 && challenge.output.contains("bot check"), "\(challenge.output)")
        let scheme = try await recipes(["import", "file:///etc/passwd"], storage: services.storageEndpoint, environment: env)
        #expect(scheme.status == 65 && scheme.output.contains("only http:// and https://"), "\(scheme.output)")

        let dry = try await recipes(["import", "\(server.baseURL)/page", "--dry-run", "--json"], storage: services.storageEndpoint, environment: env)
        #expect(dry.status == 0, "\(dry.output)")
        let schema = try JSONSerialization.jsonObject(with: Data(dry.output.utf8)) as? [String: Any]
        #expect(schema?["@type"] as? String == "Recipe" && schema?["name"] as? String == "Shakshuka")
        #expect(schema?["recipeIngredient"] as? [String] == ["4 eggs", "1 can tomatoes"])
        let storage = try services.client(services.storageEndpoint)
        #expect(try await storage.call(StorageOps.Stats.self, Empty()).recipes == 0, "a dry run stored something")

        let imported = try await recipes(["import", "\(server.baseURL)/page"], storage: services.storageEndpoint, environment: env)
        #expect(imported.status == 0 && imported.output.contains("Imported \"Shakshuka\""), "\(imported.output)")

        // A saved page with its address: same page, so the same recipe is updated, not duplicated.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("rv-page-\(UUID().uuidString).html")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(recipePage(name: "Shakshuka", ingredients: ["5 eggs", "1 can tomatoes"], image: nil).utf8).write(to: file)
        let saved = try await recipes(["import", "--html", file.path, "--url", "\(server.baseURL)/page"],
                                      storage: services.storageEndpoint, environment: env)
        #expect(saved.status == 0 && saved.output.contains("Updated \"Shakshuka\""), "\(saved.output)")
        #expect(try await storage.call(StorageOps.Stats.self, Empty()).recipes == 1)
        // An older site in Windows-1252 that names it in a <meta> only (no charset in the header), from the web and saved.
        let latin = "<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\"></head><body>"
            + #"<script type="application/ld+json">{"@type":"Recipe","name":"Crème brûlée","recipeIngredient":["200 g crème fraîche"]}</script></body></html>"#
        let latinBytes = [UInt8](latin.data(using: .windowsCP1252)!)
        server.route("/latin", .bytes(latinBytes, contentType: "text/html"))
        let fromWeb = try await recipes(["import", "\(server.baseURL)/latin", "--dry-run", "--json"], storage: services.storageEndpoint, environment: env)
        let webSchema = try JSONSerialization.jsonObject(with: Data(fromWeb.output.utf8)) as? [String: Any]
        #expect(webSchema?["name"] as? String == "Crème brûlée" && webSchema?["recipeIngredient"] as? [String] == ["200 g crème fraîche"],
                "\(fromWeb.output)")
        try Data(latinBytes).write(to: file)
        let fromFile = try await recipes(["import", "--html", file.path, "--url", "\(server.baseURL)/latin", "--dry-run", "--json"],
                                         storage: services.storageEndpoint, environment: env)
        let fileSchema = try JSONSerialization.jsonObject(with: Data(fromFile.output.utf8)) as? [String: Any]
        #expect(fileSchema?["name"] as? String == "Crème brûlée", "\(fromFile.output)")

        let noURL = try await recipes(["import", "--html", file.path], storage: services.storageEndpoint, environment: env)
        #expect(noURL.status == 64 && noURL.output.contains("--html needs --url"))

        _ = try await worker.stop()
        let down = try await recipes(["import", "\(server.baseURL)/page", "--timeout", "1"], storage: services.storageEndpoint, environment: env)
        #expect(down.status == 69 && down.output.contains("recipe-worker"), "\(down.output)")
        _ = try await strict.stop()
        await services.stop()
        await server.shutdown()
    }
}
