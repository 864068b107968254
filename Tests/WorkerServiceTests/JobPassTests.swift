import Foundation
import Logging
import Messaging
import RecipeProtocol
import Synchronization
import TestThreads
import Testing
@testable import WorkerService

/// A pass over a job against a storage of the test's own (a real server on a real socket) that gives the first page
/// of pending items and then answers the second read with `second`.
@Suite("When a job pass cannot read its next page of pending items", .onOwnThread)
struct JobPassTests {
    @Test("a refusal that is not the storage being away ends the pass with the storage's words, not as a pause")
    func refusedPage() async throws {
        let end = try await pass { _ in throw ServiceError(.invalidArgument, "from is past what this job holds") }
        guard case .unreadable(let reason) = end else {
            Issue.record("the pass ended \(end)")
            return
        }
        #expect(reason.contains("from is past what this job holds"))
    }

    @Test("a storage that is stopping when asked for the next page pauses the job with what was not begun")
    func storageAway() async throws {
        #expect(try await pass { _ in throw ServiceError(.shuttingDown, "recipe-storage is shutting down") } == .paused(notBegun: 3))
    }

    @Test("a page that does not move on ends the pass instead of being taken again")
    func stalledPage() async throws {
        let end = try await pass { job in
            .init(job: job, items: [ImportJob.Item(position: 0, url: "https://example.invalid/0")], next: 2, more: true)
        }
        guard case .unreadable(let reason) = end else {
            Issue.record("the pass ended \(end)")
            return
        }
        #expect(reason.contains("from position 2") && reason.contains("does not move on"))
    }

    /// Runs one pass over a job of 5 pending items, the first 2 on the first page (each refused at `job.start`, so
    /// nothing is imported), and gives how it ended.
    private func pass(second: @escaping @Sendable (ImportJob) throws -> JobOps.Items.Response) async throws -> JobRunner.PassEnd {
        let id = UUID()
        let job = ImportJob(id: id, createdAt: Date(), updatedAt: Date(), state: .queued, total: 5, imported: 0, failed: 0, items: nil)
        let reads = Mutex(0)
        var routes = Routes()
        routes.handle(JobOps.Items.self) { request, _ in
            let read = reads.withLock { $0 += 1; return $0 }
            guard read == 1 else { return try second(job) }
            let items = (0..<2).map { ImportJob.Item(position: $0, url: "https://example.invalid/\($0)") }
            return .init(job: job, items: items, next: 2, more: true)
        }
        routes.handle(JobOps.Start.self) { _, _ in .init(proceed: false) }
        return try await withOwnStorage(routes) { worker in
            let end = try await worker().runner.pass(id)
            #expect(reads.withLock { $0 } >= 2)
            return end
        }
    }
}
