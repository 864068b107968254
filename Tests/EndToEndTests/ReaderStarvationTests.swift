import Foundation
import Messaging
import RecipeModel
import RecipeProtocol
import RecipeStore
import Testing

/// A `recipe.get` is read on the storage's socket thread, in place; lists, searches and can-make are read on a
/// reader connection with the request waiting asynchronously, and their reader is handed back when the request
/// resumes, on that same socket thread. While the in-place read took its connection from the same pool, five
/// slow reads in flight and one get made a deadlock: the socket thread waited for a reader only it could give
/// back, and the storage never answered anything again (found by six `recipes can-make` loops beside a
/// `recipes show` loop). A process, so that a storage stuck that way is killed, not waited for.
@Suite("Reads in flight never starve the storage's socket thread")
struct ReaderStarvationTests {
    @Test("eleven clients mixing slow reads and gets are all answered, and the storage answers afterwards")
    func slowReadsBesideGets() async throws {
        let folder = temporaryDataFolder()
        // Enough lines that a can-make holds its reader for a while.
        let foods = ["apple", "bean", "carrot", "date", "egg", "fennel", "garlic", "honey", "leek", "mint"]
        let ids = (0..<400).map { _ in UUID() }
        do {
            let store = try RecipeStore(folder: URL(fileURLWithPath: folder))
            _ = try await store.importRecipes(ids.enumerated().map { number, id in
                (id, RecipeDraft(name: "Dish \(number)",
                                 ingredients: (0..<12).map { RecipeDraft.Line(text: "1 cup \(foods[(number + $0) % foods.count]) \($0)") }))
            })
            try store.close()
        }
        let (storage, endpoint) = try await startStorage(samples: false, folder: folder)
        defer { _ = Task { try? await storage.stop(signal: SIGKILL) } }
        func makeClient() throws -> MessageClient {
            var configuration = MessageClient.Configuration(endpoint: endpoint, serviceName: "storage")
            configuration.timeout = .seconds(15)
            configuration.attempts = 1
            return try MessageClient(configuration: configuration)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for slow in 0..<8 {
                let client = try makeClient()
                group.addTask {
                    for round in 0..<12 {
                        if (slow + round) % 2 == 0 {
                            _ = try await client.call(RecipeOps.CanMake.self, .init(have: ["apple"], maxMissing: 50, limit: 5))
                        } else {
                            _ = try await client.call(RecipeOps.List.self, RecipeListQuery(limit: 200))
                        }
                    }
                }
            }
            for getter in 0..<3 {
                let client = try makeClient()
                group.addTask {
                    for round in 0..<60 {
                        let recipe = try await client.call(RecipeOps.Get.self, .init(id: ids[(getter * 60 + round) % ids.count]))
                        #expect(recipe.recipe.ingredients.count == 12)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await makeClient().call(System.Health.self, Empty()).service == "recipe-storage")
        #expect(try await storage.stop() == 0, "it stops cleanly: its socket thread is free")
    }
}
