import Messaging
import RecipeProtocol
import TestThreads
import Testing
@testable import WorkerService

@Suite("When a batch job pauses instead of failing its URLs", .onOwnThread)
struct JobPauseTests {
    @Test("a storage that does not answer, is stopping, has a full disk or a damaged database pauses the job; a refusal of one URL does not")
    func pauses() {
        let away: [any Error] = [
            MessageClientError.unreachable(service: "storage", endpoint: "tcp://127.0.0.1:5555", attempts: 3, timeout: .seconds(2), hint: nil),
            ServiceError(.shuttingDown, "recipe-storage is shutting down"),
            ServiceError(.storageFull, "recipe.saveImported was not done: the disk recipe-storage writes to is full"),
            ServiceError(.storageLocked, "job.record was not done: another program holds Recipes.sqlite locked for writing"),
            ServiceError(.storageDamaged, "job.record was not done: Recipes.sqlite in recipe-storage's data folder is damaged"),
        ]
        for error in away { #expect(JobRunner.isStorageAway(error), "\(error)") }
        let refused: [any Error] = [
            ServiceError(.noRecipeFound, "no recipe"), ServiceError(.invalidArgument, "bad"), ServiceError(.internalError, "failed"),
            ServiceError(.busy, "busy"),
            // The URL's own request: waiting for the storage would not change it.
            MessageClientError.unencodable(op: "recipe.saveImported", reason: "recipe.servings is nan, not a number JSON can carry"),
            MessageClientError.frameTooLarge(frame: 1, bytes: 20_000_000, limit: 16_777_216),
        ]
        for error in refused { #expect(!JobRunner.isStorageAway(error), "\(error)") }
    }

    @Test("a URL whose work is answered busy is tried again after each pause, and recorded with the last answer only after them; other errors are not retried")
    func busyIsRetried() async throws {
        let calls = Counter()
        let value = try await JobRunner.retryingBusy(pauses: [.zero, .zero, .zero]) {
            calls.add()
            if calls.value < 3 { throw ServiceError(.busy, "recipe-worker has every file it may open in use") }
            return 42
        }
        #expect(value == 42 && calls.value == 3)
        let always = Counter()
        let error = await #expect(throws: ServiceError.self) {
            try await JobRunner.retryingBusy(pauses: [.zero, .zero]) { () async throws -> Int in
                always.add()
                throw ServiceError(.busy, "still busy")
            }
        }
        #expect(error?.code == .busy && always.value == 3, "each pause, then the last try")
        let once = Counter()
        await #expect(throws: ServiceError.self) {
            try await JobRunner.retryingBusy(pauses: [.zero, .zero]) { () async throws -> Int in
                once.add()
                throw ServiceError(.fetchFailed, "the site said no")
            }
        }
        #expect(once.value == 1)
        #expect(JobRunner.busyPauses.reduce(Duration.zero, +) >= .seconds(10), "long enough for connections to close")
    }
}

private final class Counter: @unchecked Sendable {
    // @unchecked: used by one task at a time in these tests.
    private(set) var value = 0
    func add() { value += 1 }
}

