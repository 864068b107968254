import Foundation
import Synchronization
import Logging
import Messaging
import RecipeProtocol
import ReplicaSync
import ServiceLifecycle
import ZeroMQ

/// Keeps each configured pair (the worker's storage and every replica) in step:
/// soon after a change notice from either side, every `interval` as a fallback, and
/// on request. Pairs sync side by side; each pair's runs go one at a time.
/// The worker keeps nothing: cursors live in the storages.
public actor SyncCoordinator {
    let storage: RemoteReplica
    let replicas: [RemoteReplica]
    /// Separate clients for `status`: quick to give up, and never queued behind a sync in progress.
    let probes: [String: RemoteReplica]
    let interval: Duration
    /// When false, pairs sync only when asked (`sync.run`), never on change notices or the interval.
    public nonisolated let automatic: Bool
    let logger: Logger
    private let listener: ChangeSubscriber
    private var lastRuns: [String: PairSync] = [:]
    /// The pairs whose last run sent the storage photos: a record another pair's replica holds for want of one can
    /// then be let through, and no change notice says so (a photo is not a change of the feed).
    private var broughtPhotos: Set<String> = []
    /// The last failure logged for each pair, when, and how many times it failed the same way since: a pair that
    /// keeps failing alike (a replica down, one of another release) runs at every change notice, and logs it again
    /// only when the failure changes or `failureRelog` has passed.
    private var failuresLogged: [String: (error: String, at: ContinuousClock.Instant, since: Int)] = [:]
    static let failureRelog = Duration.seconds(600)
    private var tails: [String: Task<PairSync, Never>] = [:]
    /// Per pair, the run that is queued and has not started: later requests join it (one pending run at most).
    private var queued: [String: Task<PairSync, Never>] = [:]
    /// The replica id each endpoint last gave: two endpoints with one id are two storages on copies of one
    /// database, and syncing either would mix their feeds under one cursor, so both pairs are refused.
    private var replicaIDs: [String: String] = [:]
    /// What the watch loop's schedule is told, while it runs.
    private var scheduleEvents: AsyncStream<SyncSchedule.Event>.Continuation?

    /// A coordinator for `storage` and its `replicas`; `security` holds the CURVE keys to
    /// connect to each endpoint with (an endpoint not in it is reached without CURVE).
    public init(storage: String, replicas: [String], security: [String: CurveClientSecurity] = [:],
                interval: Duration, automatic: Bool = true, logger: Logger) throws {
        self.storage = try RemoteReplica(endpoint: storage, security: security[storage], logger: logger)
        self.replicas = try replicas.map { try RemoteReplica(endpoint: $0, security: security[$0], logger: logger) }
        probes = try Dictionary(([storage] + replicas).map {
            ($0, try RemoteReplica(endpoint: $0, security: security[$0], timeout: .seconds(2), attempts: 1, logger: logger))
        }, uniquingKeysWith: { first, _ in first })
        self.interval = interval
        self.automatic = automatic
        self.logger = logger
        listener = ChangeSubscriber(logger: logger)
    }

    /// Whether any replica is configured (without one there is nothing to sync).
    public nonisolated var isEnabled: Bool { !replicas.isEmpty }

    /// Syncs every pair now, side by side (each after its own run in progress, if any), and returns what each did.
    /// The pairs meet only at the storage, and side by side none could pass on what another brought it meanwhile: when
    /// pairs brought the storage anything (changes, conflicted copies, photos another replica waits for), every
    /// other pair that ran without an error goes again, once. So one `recipes sync` gives every replica what any of
    /// them had when it began (what is changed during it waits for the next).
    public func runNow() async -> [PairSync] {
        var results = await run(replicas)
        // A pair waiting after failures (`SyncSchedule`) that synced now need wait no more.
        for result in results where result.error == nil { scheduleEvents?.yield(.recovered(result.replica)) }
        let bringers = Set(results.indices.filter { results[$0].brought || broughtPhotos.contains(results[$0].replica) })
        let again = results.indices.filter { results[$0].error == nil && !bringers.subtracting([$0]).isEmpty }
        // `run` answers in the order it was given the pairs.
        for (index, later) in zip(again, await run(again.map { replicas[$0] })) {
            results[index] = results[index].followed(by: later)
        }
        return results
    }

    private func run(_ pairs: [RemoteReplica]) async -> [PairSync] {
        await withTaskGroup(of: (Int, PairSync).self) { group in
            for (index, replica) in pairs.enumerated() {
                group.addTask { (index, await self.runPair(replica)) }
            }
            var results: [(Int, PairSync)] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    /// Runs of one pair queue up behind each other; pairs do not wait for each other,
    /// so a replica that is down (each call waits out its timeout) holds up only its own pair.
    /// A run that is queued and not started yet is shared: any number of `sync.run` requests
    /// make at most one run wait behind the one in progress.
    private func runPair(_ replica: RemoteReplica) async -> PairSync {
        if let waiting = queued[replica.name] { return await waiting.value }
        let previous = tails[replica.name]
        let run = Task {
            _ = await previous?.value
            self.starting(replica.name)
            return await self.syncPair(replica)
        }
        tails[replica.name] = run
        queued[replica.name] = run
        return await run.value
    }

    private func starting(_ name: String) { queued[name] = nil }

    /// Where every pair stands, asked of the storages themselves.
    public func status() async -> WorkerSyncOps.Status.Response {
        var pairs: [PairStatus] = []
        for endpoint in replicas {
            var status = PairStatus(storage: storage.name, replica: endpoint.name, reachable: false,
                                    lastError: lastRuns[endpoint.name]?.error)
            guard let storage = probes[self.storage.name], let replica = probes[endpoint.name] else { continue }
            do {
                let a = try await storage.info()
                let b = try await replica.info()
                let cursorAtReplica = try await replica.cursor(peer: a.replicaID)
                let cursorAtStorage = try await storage.cursor(peer: b.replicaID)
                status.reachable = true
                status.lastSyncAt = [cursorAtReplica.syncedAt, cursorAtStorage.syncedAt].compactMap { $0 }.min()
                status.pendingToReplica = try await storage.pendingCount(since: cursorAtReplica.seq, exclude: b.replicaID)
                status.pendingToStorage = try await replica.pendingCount(since: cursorAtStorage.seq, exclude: a.replicaID)
                status.conflictsCreated = a.conflictsCreated.addingSaturated(b.conflictsCreated) // their words: any Int
                let held = (a.held ?? []) + (b.held ?? [])
                status.held = held.isEmpty ? nil : held
                status.lostAtStorage = a.lostPhotos
                status.lostAtReplica = b.lostPhotos
            } catch {
                status.lastError = status.lastError ?? "\(error)"
            }
            pairs.append(status)
        }
        return .init(pairs: pairs, intervalSeconds: Double(interval.components.seconds), onRequestOnly: automatic ? nil : true)
    }

    /// Runs until cancelled: a sync at start, after change notices, and every `interval` (`SyncSchedule`
    /// decides which pair runs when). A notice or a finished run wakes the loop at once; the interval, and the end of
    /// a failed pair's wait, are checked by a timer, once a second.
    public func watch() async {
        guard isEnabled else { return }
        let (events, sink) = AsyncStream.makeStream(of: SyncSchedule.Event.self)
        listener.start { sink.yield(.notice) }
        scheduleEvents = sink
        defer {
            listener.stop()
            sink.finish()
            scheduleEvents = nil
        }
        // Subscribe before the first sync. Each subscription's connection counts as a notice once it is made
        // (`ChangeSubscriber.start`): a change made during the first sync, before the storage took the subscription, is
        // synced by the run that connection asks for, not missed until the interval — without waiting for it here.
        for endpoint in [storage] + replicas { try? await listen(to: endpoint) }
        let clock = ContinuousClock()
        let origin = clock.now
        var schedule = SyncSchedule(pairs: replicas.map(\.name), interval: interval, now: .zero)
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                sink.yield(.tick(now: clock.now - origin))
            }
        }
        defer { ticker.cancel() }
        let byName = Dictionary(replicas.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        func launch(_ names: [String]) {
            for name in names {
                guard let replica = byName[name] else { continue }
                Task {
                    let result = await self.runPair(replica)
                    sink.yield(result.error == nil ? .finished(name) : .failed(name, now: clock.now - origin))
                    // What it brought the storage may be what another pair waits for (see `broughtPhotos`).
                    if self.broughtPhotos.contains(name) { sink.yield(.notice) }
                }
            }
        }
        launch(schedule.start())
        for await event in events {
            launch(schedule.handle(event))
        }
    }

    private func syncPair(_ replica: RemoteReplica) async -> PairSync {
        var result = PairSync(storage: storage.name, replica: replica.name)
        broughtPhotos.remove(replica.name)
        // What moved each way so far: a sync that fails part way still reports the pages it moved.
        let moved = Mutex((sent: PullReport(), received: PullReport()))
        do {
            try await listen(to: storage)
            try await listen(to: replica)
            try await checkDistinct(storage, replica)
            let (sent, received) = try await SyncEngine.sync(storage, replica) { sent, received in moved.withLock { $0 = (sent, received) } }
            logRestarts(sent, received, replica)
            let both = sent + received
            result.toReplica = sent.changed
            result.toStorage = received.changed
            result.photos = both.photos
            result.photoBytes = both.photoBytes
            result.conflicts = both.conflicts
            result.heldAtReplica = sent.held
            result.heldAtStorage = received.held
            let unavailable = both.unavailablePhotos.count
            result.unavailablePhotos = unavailable > 0 ? unavailable : nil
            if received.photos > 0 { broughtPhotos.insert(replica.name) }
            if let failed = failuresLogged.removeValue(forKey: replica.name) {
                logger.notice("replica sync works again", metadata: ["storage": "\(storage.name)", "replica": "\(replica.name)",
                                                                     "failed before": "\(failed.error)", "failures not logged": "\(failed.since)"])
            }
            if both.changed > 0 {
                logger.info("replicas synced", metadata: [
                    "storage": "\(storage.name)", "replica": "\(replica.name)", "toReplica": "\(sent.changed)",
                    "toStorage": "\(received.changed)", "photos": "\(result.photos)", "conflicts": "\(result.conflicts)",
                ])
            }
        } catch {
            // One replica down does not stop the others; the next run resumes from the saved cursors.
            result.error = "\(error)"
            result.errorCode = (error as? ServiceError)?.code.rawValue
            let (sent, received) = moved.withLock { $0 }
            logRestarts(sent, received, replica)
            let both = sent + received
            (result.toReplica, result.toStorage, result.conflicts) = (sent.changed, received.changed, both.conflicts)
            (result.photos, result.photoBytes) = (both.photos, both.photoBytes)
            let now = ContinuousClock.now
            if let last = failuresLogged[replica.name], last.error == result.error, now - last.at < Self.failureRelog {
                failuresLogged[replica.name]?.since += 1
            } else {
                var metadata: Logger.Metadata = ["storage": "\(storage.name)", "replica": "\(replica.name)", "error": "\(error)"]
                if let since = failuresLogged[replica.name]?.since, since > 0 { metadata["failures not logged"] = "\(since)" }
                logger.warning("replica sync failed", metadata: metadata)
                failuresLogged[replica.name] = (result.error ?? "", now, 0)
            }
        }
        result.finishedAt = Date()
        lastRuns[replica.name] = result
        return result
    }

    /// A pull that started again part way did so for a reason a person may want to know (a replica restored, or
    /// rolled back): one line each.
    private func logRestarts(_ sent: PullReport, _ received: PullReport, _ replica: RemoteReplica) {
        for (from, to, report) in [(storage.name, replica.name, sent), (replica.name, storage.name, received)] {
            for reason in report.restarts {
                logger.notice("replica sync started again", metadata: ["from": "\(from)", "to": "\(to)", "reason": "\(reason)"])
            }
        }
    }

    /// Refuses a pair when another endpoint of this worker has given the same replica id as either side.
    private func checkDistinct(_ endpoints: RemoteReplica...) async throws {
        for endpoint in endpoints {
            let id = try await endpoint.info().replicaID
            replicaIDs[endpoint.name] = id
            if let other = replicaIDs.first(where: { $0.key != endpoint.name && $0.value == id })?.key {
                throw ServiceError(.conflict, "\(endpoint.name) and \(other) both call themselves replica \(id): they are one storage "
                                   + "reached at two addresses (give it to the worker once), or one data folder is a copy of "
                                   + "the other's that has not started as a new incarnation. Stop one, and start it from `recipes backup` or a copy "
                                   + "made while it was stopped (it then takes a new replica id); this pair was not synced")
            }
        }
    }

    /// Subscribes to a storage's change notices once its endpoint is known.
    private func listen(to replica: RemoteReplica) async throws {
        guard !listener.isListening(to: replica.name) else { return }
        guard let published = try await replica.info().publishEndpoint else { return }
        listener.add(ChangeSubscriber.reachable(published, via: replica.name), security: replica.security, for: replica.name)
    }
}

/// Runs the coordinator's watch loop for as long as the worker runs.
public struct SyncWatcher: Service {
    let coordinator: SyncCoordinator

    public init(coordinator: SyncCoordinator) { self.coordinator = coordinator }

    public func run() async throws {
        // Without replicas (or when syncing only on request) there is nothing to watch, but the service stays up with the group.
        guard coordinator.isEnabled, coordinator.automatic else { return try await gracefulShutdown() }
        await cancelWhenGracefulShutdown { await coordinator.watch() }
    }
}

extension PairSync {
    /// Whether the run gave the storage changes another replica does not have yet: records from the replica, or
    /// conflicted copies (made at either side; one made at the storage is a new record there).
    var brought: Bool { toStorage > 0 || conflicts > 0 }

    /// This run and a `later` one of the same pair, as one: what both moved, and where the later left things.
    func followed(by later: PairSync) -> PairSync {
        var both = later
        both.toReplica = toReplica.addingSaturated(later.toReplica)
        both.toStorage = toStorage.addingSaturated(later.toStorage)
        both.photos = photos.addingSaturated(later.photos)
        both.photoBytes = photoBytes.addingSaturated(later.photoBytes)
        both.conflicts = conflicts.addingSaturated(later.conflicts)
        return both
    }
}
