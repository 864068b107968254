import Foundation
import Messaging
import PhotoProcessing
import RecipeProtocol
import WebFetch
import WorkerService

extension FuzzChecks {
    /// A storage that answers anything, to the worker's batch jobs: recipe-worker's `JobRunner` (the code that scans for
    /// unfinished jobs at start and every few seconds, and imports or migrates their items) against a ZeroMQ server whose
    /// replies are the input, framed as for `syncPeer` (at most 32 replies; once they run out it answers
    /// `internal_error`). The first byte says what runs: bit 0 clear, a scan (`job.list`) and a pass over each job it
    /// lists (at most two); set, a pass over one job straight away. URL items are refused before any lookup (the
    /// fetcher takes no host); migration items read their entry (`job.entry`) from the stranger and go through the
    /// export readers and the photo intake.
    ///
    /// Promise: every pass ends — done, paused or unreadable — and nothing traps: a trap is recipe-worker ended at its
    /// scan, restarted into the same jobs, a crash loop. Log lines are made as at the most verbose level (`quiet`).
    public static func workerJobs(_ data: Data) {
        guard let mode = data.first else { return }
        let runner = JobsAgainstStranger.runner // made outside `blocking`, which it uses
        Stranger.asStorage.load(conversation(data.dropFirst(), limit: 32))
        blocking {
            if mode & 1 == 1 {
                _ = await runner.pass(UUID(uuidString: "01A222B4-0000-7000-8000-00000000000A")!)
                return
            }
            guard let jobs = try? await runner.unfinishedJobs() else { return }
            for job in jobs.prefix(2) { _ = await runner.pass(job.id) }
        }
    }

    /// recipe-worker's job runner, with the stranger as its storage: short waits, no pauses when answered busy, one item at
    /// a time (so replies come in the order of the requests), and a fetcher that reaches no host.
    enum JobsAgainstStranger {
        static let runner: JobRunner = {
            var client = MessageClient.Configuration(endpoint: Stranger.asStorage.endpoint, serviceName: "recipe-storage")
            client.timeout = .milliseconds(300)
            client.attempts = 1
            let storage = MessageClientPool(configuration: client, size: 2, logger: FuzzChecks.quiet)
            let photos = PhotoDesk(limits: PhotoFitter.Limits(), storage: storage)
            let fetcher = GuardedFetcher(policy: FetchPolicy(connectTimeout: 1, readTimeout: 1, overallTimeout: 1, onlyAllowList: true),
                                         logger: FuzzChecks.quiet)
            let importer = PageImporter(fetcher: fetcher, storage: storage, photos: photos, logger: FuzzChecks.quiet)
            return JobRunner(importer: importer, migrator: EntryMigrator(storage: storage, photos: photos), storage: storage,
                             concurrency: 1, pausesWhenBusy: [], logger: FuzzChecks.quiet)
        }()
    }
}
