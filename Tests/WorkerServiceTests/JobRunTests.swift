import Foundation
import Logging
import Messaging
import RecipeProtocol
import RecipeStore
import Synchronization
import TestScratch
import TestThreads
import Testing
@testable import WorkerService

/// A job's begins counted by a real store behind a storage of the test's own, whose entries are answered "shutting
/// down" (the storage restarting while the worker migrates them).
@Suite("When the worker begins a URL again", .onOwnThread)
struct JobRunTests {
    @Test("its own run beginning again what the storage never got a result for is not a stop: three passes of one run are not given up, two other runs then are")
    func ownRunIsNotAStop() async throws {
        let store = try RecipeStore(folder: Scratch.url("rv-job-run"))
        defer { try? store.close() }
        let job = try await store.createJob(id: UUID(), urls: ["entry-1.json"])
        let begins = Mutex<[Bool]>([])
        var routes = Routes()
        routes.handle(JobOps.Items.self) { request, _ in
            var page = try await store.jobItems(jobID: request.jobID, view: request.view ?? .all, from: request.from ?? 0, limit: request.limit ?? 100)
            page.job.migration = .init(format: .paprika, source: "Recipes.paprikarecipes")
            return page
        }
        routes.handle(JobOps.Start.self) { request, _ in
            let proceed = try await store.startJobItem(jobID: request.jobID, position: request.position, run: request.run)
            begins.withLock { $0.append(proceed) }
            return .init(proceed: proceed)
        }
        routes.handle(JobOps.Entry.self) { _, _ in throw ServiceError(.shuttingDown, "recipe-storage is shutting down") }
        try await withOwnStorage(routes) { worker in
            let one = try worker()
            for _ in 0..<3 { #expect(await one.runner.pass(job.id) == .paused(notBegun: 0)) }
            #expect(begins.withLock { $0 } == [true, true, true])
            #expect(try await store.job(job.id).items?.first?.state == .pending)
            // Another run (the worker restarted) counts: the first run and this one both began it without a result.
            _ = try await worker().runner.pass(job.id)
            _ = try await worker().runner.pass(job.id)
            #expect(begins.withLock { $0 } == [true, true, true, true, false])
            let item = try #require(try await store.job(job.id).items?.first)
            #expect(item.state == .failed && item.error?.message.contains("stopped 2 times") == true, "\(item)")
        }
    }
}
