import Messaging
import RecipeProtocol
import TestThreads
import Testing
@testable import WorkerService

@Suite("When a batch job pauses instead of failing its URLs", .onOwnThread)
struct JobPauseTests {
    @Test("a storage that does not answer, is stopping or has a full disk pauses the job; a refusal of one URL does not")
    func pauses() {
        let away: [any Error] = [
            MessageClientError.unreachable(service: "storage", endpoint: "tcp://127.0.0.1:5555", attempts: 3, timeout: .seconds(2), hint: nil),
            ServiceError(.shuttingDown, "recipe-storage is shutting down"),
            ServiceError(.storageFull, "recipe.saveImported was not done: the disk recipe-storage writes to is full"),
            ServiceError(.storageLocked, "job.record was not done: another program holds Recipes.sqlite locked for writing"),
        ]
        for error in away { #expect(JobRunner.isStorageAway(error), "\(error)") }
        let refused: [any Error] = [
            ServiceError(.noRecipeFound, "no recipe"), ServiceError(.invalidArgument, "bad"), ServiceError(.internalError, "failed"),
            ServiceError(.busy, "busy"),
        ]
        for error in refused { #expect(!JobRunner.isStorageAway(error), "\(error)") }
    }
}
