import Foundation
import Logging
import Messaging
import RecipeProtocol
import ZeroMQ

/// A `recipe-storage` reached over ZeroMQ.
public struct RemoteReplica: SyncEndpoint {
    public let client: MessageClient
    public var name: String { client.configuration.endpoint }
    /// The CURVE keys the client connects with (its change-notice subscription uses the same).
    public var security: CurveClientSecurity? { client.configuration.security }

    public init(client: MessageClient) { self.client = client }

    /// A client for the storage at `endpoint`. The defaults suit syncing: a replica that is down
    /// costs a sync 20 seconds, not minutes, and a page applies in well under 10.
    public init(endpoint: String, security: CurveClientSecurity? = nil, timeout: Duration = .seconds(10), attempts: Int = 2,
                logger: Logger) throws {
        var configuration = MessageClient.Configuration(endpoint: endpoint, serviceName: "recipe-storage")
        configuration.setting = "recipe-worker's --storage or --replica"
        configuration.timeout = timeout
        configuration.attempts = attempts
        configuration.security = security
        configuration.securityHint = "check the worker's --secret-key, --storage-key and --replica-key"
        configuration.hint = "is that recipe-storage running? check the worker's --storage and --replica endpoints"
        client = try MessageClient(configuration: configuration, logger: logger)
    }

    /// A request to the storage. An error it answers with is said to come from it ("tcp://…:5556 answered: …"), so a
    /// sync that fails names the side that refused — whose disk is full, whose database is damaged — and not only what
    /// was refused; its code stays the storage's. What already names the endpoint (the client's own errors, a service
    /// that is not a storage) is left as it is.
    private func send<Op: WireOperation>(_ op: Op.Type, _ body: Op.Request, frames: [Data] = [],
                                         timeout: Duration? = nil) async throws -> Reply<Op.Response> {
        do {
            return try await client.send(op, body, frames: frames, timeout: timeout)
        } catch let error as ServiceError {
            throw answered(error)
        }
    }

    private func answered(_ error: ServiceError) -> ServiceError {
        error.message.hasPrefix(name) ? error : ServiceError(error.code, "\(name) answered: \(error.message)")
    }

    private func call<Op: WireOperation>(_ op: Op.Type, _ body: Op.Request, timeout: Duration? = nil) async throws -> Op.Response {
        try await send(op, body, timeout: timeout).body
    }

    /// The first request of every sync: a service that does not know it is not a storage (the worker's own endpoint
    /// given as a replica, say), and the error says that rather than only which operations it answers.
    public func info() async throws -> SyncOps.Info.Response {
        do {
            return try await client.call(SyncOps.Info.self, .init())
        } catch let error as ServiceError where error.code == .unknownOp && error.message.hasPrefix("unknown operation") {
            // (The other service answering, recipe-worker, is said so by the client itself.)
            throw ServiceError(.unknownOp,
                "\(name) is not a recipe-storage: it does not answer sync.info (\(error.message)); check the worker's --storage and --replica endpoints")
        } catch let error as ServiceError {
            throw answered(error)
        }
    }

    public func changes(since: Int, exclude: String?, limit: Int, seen: SyncOps.SeenWrite?, sinceMark: String?,
                        seenWrites: [SyncOps.SeenWrite]?) async throws -> SyncOps.Changes.Response {
        try await call(SyncOps.Changes.self, .init(since: since, exclude: exclude, limit: limit, seen: seen, sinceMark: sinceMark,
                                                          seenWrites: seenWrites))
    }

    public func pendingCount(since: Int, exclude: String?) async throws -> Int {
        try await call(SyncOps.Pending.self, .init(since: since, exclude: exclude)).count
    }

    public func missingPhotos(_ hashes: [String]) async throws -> [String] {
        try await call(SyncOps.MissingPhotos.self, .init(sha256: hashes)).missing
    }

    public func photo(sha256: String) async throws -> Data {
        let reply = try await send(SyncOps.Photo.self, .init(sha256: sha256))
        guard let index = reply.body.photo.index(among: reply.frames.count) else {
            throw ServiceError(.internalError, "\(name) sent photo \(sha256) without its bytes")
        }
        return reply.frames[index]
    }

    /// `sync.photos`, asked again for what a reply left out; a storage from before it sends them one at a time.
    public func photos(_ hashes: [String]) async throws -> PhotoBatch {
        do {
            return try await PhotoBatch.collect(hashes, name: name) { asked in
                let reply = try await send(SyncOps.Photos.self, .init(sha256: asked))
                var batch = PhotoBatch(missing: reply.body.missing)
                for entry in reply.body.photos {
                    guard let index = entry.photo.index(among: reply.frames.count) else {
                        throw ServiceError(.internalError, "\(name) sent photo \(entry.sha256) without its bytes")
                    }
                    batch.found.append((entry.sha256, reply.frames[index]))
                }
                return batch
            }
        } catch let error as ServiceError where error.code == .unknownOp {
            return try await photosOneAtATime(hashes)
        }
    }

    public func putPhoto(sha256: String, bytes: Data) async throws -> Bool {
        try await send(SyncOps.PutPhoto.self, .init(sha256: sha256), frames: [bytes]).body.stored
    }

    /// One request for the lot; a storage from before `sync.putPhotos` gets them one at a time.
    public func putPhotos(_ photos: [(sha256: String, bytes: Data)]) async throws -> Int {
        let entries = photos.indices.map { SyncOps.PutPhotos.Entry(sha256: photos[$0].sha256, photo: FrameReference(frame: $0 + 1)) }
        do {
            return try await send(SyncOps.PutPhotos.self, .init(photos: entries), frames: photos.map(\.bytes)).body.stored
        } catch let error as ServiceError where error.code == .unknownOp {
            return try await putPhotosOneAtATime(photos)
        }
    }

    public func retire(_ ids: [String]) async throws -> SyncOps.Apply.Response {
        try await call(SyncOps.Retire.self, .init(ids: ids))
    }

    public func apply(from: String, records: [SyncRecord], cursor: Int?, to: String?, after: Int?, seen: SyncOps.SeenWrite?,
                      cursorMark: String?, unavailablePhotos: [String]?) async throws -> SyncOps.Apply.Response {
        try await call(SyncOps.Apply.self, .init(from: from, records: records, cursor: cursor, to: to, after: after, seen: seen,
                                                        cursorMark: cursorMark, unavailablePhotos: unavailablePhotos))
    }

    public func cursor(peer: String) async throws -> SyncOps.Cursor.Response {
        try await call(SyncOps.Cursor.self, .init(peer: peer))
    }

    /// How long a storage may take to copy its database for a snapshot, or to check and install one: it reads
    /// the whole file (about 10 s a gigabyte on a small machine), so the usual request timeout does not fit.
    static let snapshotTimeout: Duration = .seconds(900)

    public func snapshot() async throws -> SyncOps.Snapshot.Response {
        try await call(SyncOps.Snapshot.self, .init(), timeout: max(Self.snapshotTimeout, client.configuration.timeout))
    }

    public func snapshotPhotos(_ id: UUID, after: String?) async throws -> SyncOps.SnapshotPhotos.Response {
        try await call(SyncOps.SnapshotPhotos.self, .init(snapshot: id, after: after))
    }

    public func readSnapshot(_ id: UUID, offset: Int) async throws -> Data {
        let reply = try await send(SyncOps.SnapshotRead.self, .init(snapshot: id, offset: offset))
        guard let index = reply.body.data.index(among: reply.frames.count) else {
            throw ServiceError(.internalError, "\(name) sent part of snapshot \(id.uuidString) without its bytes")
        }
        return reply.frames[index]
    }

    public func snapshotDone(_ id: UUID) async throws { _ = try await call(SyncOps.SnapshotDone.self, .init(snapshot: id)) }

    public func writeSnapshot(_ id: UUID, offset: Int, bytes: Data, total: Int) async throws {
        _ = try await send(SyncOps.SnapshotWrite.self, .init(snapshot: id, offset: offset, total: total), frames: [bytes])
    }

    public func install(_ request: SyncOps.Install.Request) async throws -> SyncOps.Install.Response {
        try await call(SyncOps.Install.self, request, timeout: max(Self.snapshotTimeout, client.configuration.timeout))
    }
}
