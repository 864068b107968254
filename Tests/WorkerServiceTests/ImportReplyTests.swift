import Foundation
import Logging
import Messaging
import Synchronization
import RecipeModel
import RecipeProtocol
import RecipeStore
import TestHTTPServer
import TestImages
import TestScratch
import TestThreads
import Testing
import WebFetch
@testable import WorkerService

/// An import whose recipe and photo are stored, against a real store behind a storage of the test's own whose
/// `recipe.get` — the read back of the recipe with its photo — fails as a storage can between two requests.
@Suite("When the recipe an import stored cannot be read back", .onOwnThread)
struct ImportReplyTests {
    /// How the read back fails: the storage busy, stopping, or the recipe deleted by someone else meanwhile.
    static let failures: [ServiceError] = [
        ServiceError(.busy, "recipe-storage is busy; try again"),
        ServiceError(.shuttingDown, "recipe-storage is shutting down"),
        ServiceError(.notFound, "no recipe with that id"),
    ]

    @Test("the import is still said to be done, with the photo the storage says the recipe has", arguments: failures)
    func importedAfterAll(_ failure: ServiceError) async throws {
        let (result, store, reads) = try await importPage(readBack: failure)
        defer { try? store.close() }
        // A busy storage is asked again (about 10 s in all); the others are answers.
        #expect(failure.code == .busy ? reads > 1 : reads == 1)
        #expect(result.outcome == .created && result.photo.added, "\(result)")
        let recipe = try #require(result.recipe)
        let stored = try await store.recipe(recipe.id)
        #expect(recipe.name == "Skillet Cornbread" && stored.name == recipe.name)
        #expect(recipe.photos.count == 1 && recipe.photos == stored.photos, "\(recipe.photos) against \(stored.photos)")
    }

    @Test("read back, the reply is the recipe as stored after its photo: the version and time the photo gave it")
    func readBack() async throws {
        let (result, store, reads) = try await importPage(readBack: nil)
        defer { try? store.close() }
        #expect(reads == 1)
        let recipe = try #require(result.recipe)
        let stored = try await store.recipe(recipe.id)
        #expect(recipe.version == 2 && stored.version == 2 && recipe.photos.count == 1 && recipe.photos == stored.photos, "\(recipe)")
        #expect(abs(recipe.updatedAt.timeIntervalSince(stored.updatedAt)) < 0.002) // the wire keeps milliseconds
    }

    /// Imports a saved page whose image is served on loopback, through a worker whose storage is a real store (save
    /// and photo add) that answers the read back with `failure` (or the store's recipe when nil). Gives the result,
    /// the store and how many read backs were asked.
    private func importPage(readBack failure: ServiceError?) async throws -> (ImportResult, RecipeStore, Int) {
        let images = try await TestHTTPServer()
        defer { Task { await images.shutdown() } }
        images.route("/cornbread.jpg", .bytes(Array(TestImages.picture(width: 640, height: 480, as: .jpeg(quality: 85))), contentType: "image/jpeg"))
        let page = """
            <html><head><script type="application/ld+json">
            {"@context": "https://schema.org", "@type": "Recipe", "name": "Skillet Cornbread",
             "image": "\(images.baseURL)/cornbread.jpg",
             "recipeIngredient": ["1 cup cornmeal", "1 cup buttermilk", "1 egg"],
             "recipeInstructions": "Mix everything. Bake in a hot skillet for 20 minutes."}
            </script></head><body></body></html>
            """
        let store = try RecipeStore(folder: Scratch.url("rv-import-reply"))
        let reads = Mutex(0)
        var routes = Routes()
        routes.handle(RecipeOps.SaveImported.self) { request, _ in
            let (recipe, outcome) = try await store.saveImported(id: request.id ?? UUID(), request.recipe, sameAs: request.sameAs)
            return .init(recipe: recipe, outcome: outcome)
        }
        routes.handle(PhotoOps.Add.self) { request, context in
            .init(photos: try await store.addPhoto(recipeID: request.recipeID, bytes: try context.frame(request.photo), position: request.position))
        }
        routes.handle(RecipeOps.Get.self) { request, _ in
            reads.withLock { $0 += 1 }
            if let failure { throw failure }
            return try await store.recipeDetail(request.id, servings: nil)
        }
        let result = try await withOwnStorage(routes, configure: { $0.fetchPolicy.allowList = try! AllowList(["127.0.0.1"]) }) { worker in
            try await worker().runner.importer.importHTML(page, address: "https://cornbread.example/skillet", dryRun: false, id: nil)
        }
        return (result, store, reads.withLock { $0 })
    }
}
