@testable import Messaging
import RecipeProtocol
import Testing

/// `RECIPES_STORAGE` set to the worker's endpoint made every command say "unknown operation "recipe.list";
/// recipe-worker answers: import.batch, …" and `recipes status` report the worker as "recipe-storage: up".
@Suite("An endpoint answered by the other service")
struct WrongServiceTests {
    func refusal(server: String, client: String, setting: String?) async throws -> ServiceError? {
        try await withServer(testRoutes(), configure: { $0.serviceName = server }) { endpoint in
            var configuration = MessageClient.Configuration(endpoint: endpoint, serviceName: client)
            configuration.timeout = .seconds(5)
            configuration.setting = setting
            let client = try MessageClient(configuration: configuration)
            let error = await #expect(throws: ServiceError.self) { _ = try await client.call(RecipeOps.List.self, RecipeListQuery()) }
            return error.map { ServiceError($0.code, $0.message.replacingOccurrences(of: endpoint, with: "ENDPOINT")) }
        }
    }

    @Test("is said as the mistake it is, with where to set the endpoint; an operation one service lacks is said as before")
    func saidAsSuch() async throws {
        #expect(try await refusal(server: "recipe-worker", client: "recipe-storage", setting: "RECIPES_STORAGE or --storage")
                == ServiceError(.unknownOp, "ENDPOINT is recipe-worker, not recipe-storage (it does not answer recipe.list); "
                                + "set RECIPES_STORAGE or --storage to recipe-storage's endpoint"))
        #expect(try await refusal(server: "recipe-storage", client: "recipe-worker", setting: nil)?.message
                == "ENDPOINT is recipe-storage, not recipe-worker (it does not answer recipe.list); give recipe-worker's endpoint")
        // The service asked for, without the operation (an older version): its own words.
        let older = try await refusal(server: "recipe-storage", client: "recipe-storage", setting: "RECIPES_STORAGE or --storage")
        #expect(older?.code == .unknownOp && older?.message.hasPrefix("unknown operation \"recipe.list\"; recipe-storage answers: ") == true)
        #expect(MessageClient.answeringService("unknown operation \"a; b answers: c\"; recipe-worker answers: x, y") == "recipe-worker")
        #expect(MessageClient.answeringService("no such thing") == nil)
    }
}
