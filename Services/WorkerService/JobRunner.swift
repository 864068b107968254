import Foundation
import Logging
import Messaging
import RecipeModel
import RecipeProtocol

/// Runs batch imports. Jobs and every URL's result live in recipe-storage, so
/// the runner holds nothing that a restart would lose: on start (and every few
/// seconds after) it asks storage for unfinished jobs and carries on with their
/// pending URLs. One URL's failure is recorded and the batch goes on; a URL is
/// marked begun in storage before it is fetched, so a page that stops the worker
/// is given up after two runs began it instead of stopping every restarted worker.
/// At most `concurrency` URLs are imported at once, across all jobs.
public actor JobRunner {
    let importer: PageImporter
    let migrator: EntryMigrator
    let storage: MessageClientPool
    let concurrency: Int
    let rescanInterval: Duration
    let logger: Logger
    private var running: Set<UUID> = []
    private let slots: Slots
    /// This run of the worker, named in every URL it begins: the storage counts a URL begun again only when another
    /// run begins it (this one stopped), not when this one begins it again after the storage was away.
    let run = UUID().uuidString

    /// Pauses between tries of a URL whose work is answered `busy` (`busyPauses`, unless a fuzzing run gives shorter).
    let pausesWhenBusy: [Duration]

    public init(importer: PageImporter, migrator: EntryMigrator, storage: MessageClientPool, concurrency: Int,
                rescanInterval: Duration = .seconds(5), pausesWhenBusy: [Duration] = JobRunner.busyPauses, logger: Logger) {
        self.pausesWhenBusy = pausesWhenBusy
        self.importer = importer
        self.migrator = migrator
        self.storage = storage
        self.concurrency = max(1, concurrency)
        self.slots = Slots(limit: concurrency)
        self.rescanInterval = rescanInterval
        self.logger = logger
    }

    /// Creates a job in storage and starts it; replies with the stored job.
    public func submit(_ request: JobOps.Create.Request) async throws -> ImportJob {
        let job = try await storage.call(JobOps.Create.self, request)
        logger.info(job.migration == nil ? "import job created" : "migration created",
                    metadata: ["job": "\(job.id)", "items": "\(job.total)"])
        start(job.id)
        return job
    }

    /// Picks up unfinished jobs now and every `rescanInterval` until cancelled.
    public func watch() async {
        while !Task.isCancelled {
            do {
                for job in try await unfinishedJobs() { start(job.id) }
            } catch {
                logger.warning("could not ask recipe-storage for unfinished jobs; will try again", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: rescanInterval)
        }
    }

    /// The unfinished jobs the storage lists (oldest first) that no pass of this runner is working on, each said in the log.
    public func unfinishedJobs() async throws -> [ImportJob] {
        let listed = try await storage.call(JobOps.List.self, .init(unfinished: true, limit: 100)).jobs
        let waiting = listed.reversed().filter { !running.contains($0.id) }
        for job in waiting { logger.info("resuming import job", metadata: ["job": "\(job.id)", "pending": "\(job.pending)"]) }
        return waiting
    }

    private func start(_ id: UUID) {
        guard running.insert(id).inserted else { return }
        Task {
            await self.pass(id)
            self.finished(id)
        }
    }

    private func finished(_ id: UUID) { running.remove(id) }

    /// How a pass over a job ended.
    public enum PassEnd: Equatable, Sendable {
        /// Every pending item was taken (or there was none).
        case finished
        /// The storage is away, stopping, full or locked: `notBegun` items stay pending for the next scan.
        case paused(notBegun: Int)
        /// The storage answered a read of the job with an error that is not one of those (said in `reason`): the
        /// pass ends, and the next scan starts the job again.
        case unreadable(reason: String)
    }

    /// Imports a job's pending URLs, at most `concurrency` at a time. They are read from storage a page at a time
    /// as the pass goes (a migration may hold 50,000 entries, more than one reply carries).
    @discardableResult
    public func pass(_ id: UUID) async -> PassEnd {
        var pending = PendingItems(jobID: id, storage: storage)
        let first: ImportJob.Item?
        do {
            first = try await pending.next()
        } catch {
            logger.warning("could not read import job; will try again", metadata: ["job": "\(id)", "error": "\(error)"])
            return Self.isStorageAway(error) ? .paused(notBegun: 0) : .unreadable(reason: "\(error)")
        }
        guard let first, let job = pending.job else { return .finished }
        let importer = importer, migrator = migrator, slots = slots
        let turn = ItemTurnContext(jobID: id, run: run, pausesWhenBusy: pausesWhenBusy, storage: storage, logger: logger)
        let migrating = job.migration != nil
        // When the storage goes away the pass stops taking URLs: each would wait out the client's tries for nothing
        // and say so in a line of its own (a 1,000-URL job, a storage restarting: hours of retries, a line per URL).
        // What was not begun stays pending, and the next scan resumes the job.
        let (begun, stop) = await withTaskGroup(of: ItemTurn.self) { group -> (Int, PassStop?) in
            var begun = 0
            var stop: PassStop?
            func add(_ item: ImportJob.Item) {
                begun += 1
                group.addTask {
                    await slots.withSlot {
                        await turn.process(item) { item in
                            if migrating {
                                let done = try await migrator.migrate(jobID: id, position: item.position)
                                return (done.outcome, done.recipe, done.photoNote)
                            }
                            let imported = try await importer.importURL(item.url, dryRun: false, id: nil)
                            return (imported.outcome, imported.recipe, imported.photo.added ? nil : imported.photo.note)
                        }
                    }
                }
            }
            add(first)
            // A page the storage does not give stops the pass taking items, and says why.
            for _ in 1..<concurrency {
                do {
                    guard let item = try await pending.next() else { break }
                    add(item)
                } catch {
                    stop = PassStop(error)
                    break
                }
            }
            while let turn = await group.next() {
                if turn == .storageAway, stop == nil { stop = .storageAway }
                guard stop == nil else { continue }
                do {
                    if let item = try await pending.next() { add(item) }
                } catch {
                    stop = PassStop(error)
                }
            }
            return (begun, stop)
        }
        switch stop {
        case nil:
            logger.info("import job pass finished", metadata: ["job": "\(id)"])
            return .finished
        case .storageAway:
            let notBegun = max(0, job.pending - begun)
            logger.warning("recipe-storage is not reachable, is stopping or has a full disk: the import job pauses, and what it has not done stays pending for the next scan",
                           metadata: ["job": "\(id)", "not begun": "\(notBegun)"])
            return .paused(notBegun: notBegun)
        case .unreadable(let error):
            // Not the storage being away: its own words, so that what went wrong can be found.
            logger.warning("recipe-storage did not give the import job's next pending URLs: the pass ends, and the next scan starts the job again",
                           metadata: ["job": "\(id)", "begun": "\(begun)", "error": "\(error)"])
            return .unreadable(reason: "\(error)")
        }
    }

    /// Why a pass stopped taking items.
    private enum PassStop {
        case storageAway
        case unreadable(any Error)

        init(_ error: any Error) {
            self = JobRunner.isStorageAway(error) ? .storageAway : .unreadable(error)
        }
    }

    /// A job's pending items, read from storage a page at a time by position (`job.items`, view pending).
    struct PendingItems {
        let jobID: UUID
        let storage: MessageClientPool
        /// The job's state and counts, as of the first page.
        private(set) var job: ImportJob?
        private var page: [ImportJob.Item] = []
        private var from = 0
        private var more = true
        static let pageSize = 200

        init(jobID: UUID, storage: MessageClientPool) {
            self.jobID = jobID
            self.storage = storage
        }

        mutating func next() async throws -> ImportJob.Item? {
            if page.isEmpty && more {
                let reply = try await storage.call(JobOps.Items.self, .init(jobID: jobID, view: .pending, from: from, limit: Self.pageSize))
                if job == nil { job = reply.job }
                // A page that does not move on ends the pass (the next scan starts again) instead of repeating itself.
                if (reply.more || !reply.items.isEmpty) && reply.next <= from {
                    more = false
                    throw PageStalled(from: from, next: reply.next)
                }
                page = reply.items.reversed()
                more = reply.more
                from = reply.next
            }
            return page.popLast()
        }
    }

    /// The storage's page of pending items ended where it began (or before): reading on would repeat it.
    struct PageStalled: Error, CustomStringConvertible {
        let from: Int
        let next: Int
        var description: String {
            "the page of pending items read from position \(from) says the next one starts at \(next), which does not move on"
        }
    }

    /// How one URL's turn ended, as far as the rest of the pass is concerned.
    private enum ItemTurn {
        case done
        /// The storage did not answer, is stopping or has a full disk: the URL stays pending, and so do the ones after it.
        case storageAway
    }

    /// The storage cannot take a job's work for now: it does not answer, is stopping, its disk is full, another
    /// program holds its database locked or the database is damaged (until a backup is restored). The
    /// job pauses with its URLs pending (a full disk would otherwise fail every URL left, and could not even
    /// record that); the next scan goes on once the storage can write again.
    static func isStorageAway(_ error: any Error) -> Bool {
        if let error = error as? MessageClientError {
            // A request too large, or one holding what JSON cannot carry, is this URL's own: waiting will not help.
            switch error {
            case .frameTooLarge, .unencodable: return false
            case .unreachable, .connectionLost, .refused, .invalidReply, .closed: return true
            }
        }
        guard let code = (error as? ServiceError)?.code else { return false }
        return code == .shuttingDown || code == .storageFull || code == .storageLocked || code == .storageDamaged
    }

    /// Pauses between tries of a URL whose work was answered `busy` (this worker, or the storage past its own
    /// retries, with every file it may open in use: nothing was done): about 15 s in all before the URL is recorded
    /// with that answer, instead of at once.
    public static let busyPauses: [Duration] = [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8)]

    /// `work`, tried again after each of `pauses` while it is answered `busy`; its last answer otherwise. A pass
    /// being cancelled stops the waiting, with the busy answer.
    static func retryingBusy<T>(pauses: [Duration] = busyPauses, _ work: () async throws -> T) async throws -> T {
        for pause in pauses {
            do {
                return try await work()
            } catch let error as ServiceError where error.code == .busy {
                try? await Task.sleep(for: pause)
                if Task.isCancelled { throw error }
            }
        }
        return try await work()
    }


    /// What one item's turn of a pass needs: the job, this worker's run, the pauses when the storage answers busy,
    /// the storage and the log.
    private struct ItemTurnContext: Sendable {
        let jobID: UUID
        let run: String
        let pausesWhenBusy: [Duration]
        let storage: MessageClientPool
        let logger: Logger

        /// One item: begun in storage, `work` done, its result recorded. `work` gives the outcome, the
        /// stored recipe and a note on the photos.
        func process(_ item: ImportJob.Item, work: @Sendable (ImportJob.Item) async throws -> (ImportOutcome, Recipe?, String?)) async -> ItemTurn {
            var result = item
            do {
                guard try await storage.call(JobOps.Start.self, .init(jobID: jobID, position: item.position, run: run)).proceed else {
                    logger.warning("URL not begun: it has a result already, or two runs of the worker stopped while importing it and it was given up",
                                   metadata: ["job": "\(jobID)", "url": "\(item.url)"])
                    return .done
                }
            } catch {
                if isStorageAway(error) { return .storageAway } // said once, for the whole pass
                logger.warning("could not mark a URL as begun; it stays pending", metadata: ["url": "\(item.url)", "error": "\(error)"])
                return .done
            }
            do {
                let (outcome, recipe, photoNote) = try await retryingBusy(pauses: pausesWhenBusy) { try await work(item) }
                result.state = .imported
                result.outcome = outcome
                result.recipeID = recipe?.id
                result.recipeName = recipe?.name
                result.photoNote = photoNote
            } catch where isStorageAway(error) {
                // Storage is away, stopping or full: the URL stays pending; the next scan retries it.
                return .storageAway
            } catch let error as ServiceError {
                result.state = .failed
                result.error = error
            } catch {
                result.state = .failed
                result.error = ServiceError(.internalError, "importing \(item.url) failed: \(error)")
            }
            do {
                _ = try await storage.call(JobOps.Record.self, .init(jobID: jobID, position: item.position, result: result))
            } catch {
                // Its work is done but not recorded: said for this URL, which the next pass does again.
                logger.warning("could not record a URL's result; it stays pending", metadata: ["url": "\(item.url)", "error": "\(error)"])
                return isStorageAway(error) ? .storageAway : .done
            }
            return .done
        }
    }
}
