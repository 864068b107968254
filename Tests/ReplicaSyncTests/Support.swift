import Crypto
import Foundation
import RecipeModel
import RecipeProtocol
import RecipeStore
import ReplicaSync
import Testing
import TestRandom

/// A store in this process, as the sync engine sees a replica (the worker reaches the same operations over ZeroMQ).
struct LocalReplica: SyncEndpoint {
    let store: RecipeStore
    var name: String { store.folder.lastPathComponent }

    func info() async throws -> SyncOps.Info.Response { try await store.syncInfoResponse(publishEndpoint: nil) }
    func retire(_ ids: [String]) async throws -> SyncOps.Apply.Response { try await store.retireReplicas(ids) }
    func changes(since: Int, exclude: String?, limit: Int, seen: SyncOps.SeenWrite?, sinceMark: String?,
                 seenWrites: [SyncOps.SeenWrite]?) async throws -> SyncOps.Changes.Response {
        try await store.syncChanges(since: since, exclude: exclude, limit: limit, seen: seen, sinceMark: sinceMark, seenWrites: seenWrites)
    }
    func pendingCount(since: Int, exclude: String?) async throws -> Int { try await store.syncPendingCount(since: since, exclude: exclude) }
    func missingPhotos(_ hashes: [String]) async throws -> [String] { try store.missingPhotos(hashes) }
    func photo(sha256: String) async throws -> Data { try store.photoBlob(sha256: sha256) }
    func photos(_ hashes: [String]) async throws -> PhotoBatch {
        try await PhotoBatch.collect(hashes, name: name) { asked in
            let read = try await store.syncPhotoBlobs(asked, maxBytes: SyncOps.Photos.maxBytes)
            return PhotoBatch(found: read.blobs, missing: read.missing)
        }
    }
    func putPhoto(sha256: String, bytes: Data) async throws -> Bool { try store.putPhotoBlob(sha256: sha256, bytes: bytes) }
    func putPhotos(_ photos: [(sha256: String, bytes: Data)]) async throws -> Int { try store.putPhotoBlobs(photos) }
    func apply(from: String, records: [SyncRecord], cursor: Int?, to: String?, after: Int?, seen: SyncOps.SeenWrite?,
               cursorMark: String?, unavailablePhotos: [String]?) async throws -> SyncOps.Apply.Response {
        try await store.applySync(from: from, records: records, cursor: cursor, expecting: to, after: after, seen: seen, cursorMark: cursorMark,
                                  unavailablePhotos: unavailablePhotos ?? [])
    }
    func cursor(peer: String) async throws -> SyncOps.Cursor.Response { try await store.syncCursor(peer: peer) }
    func snapshot() async throws -> SyncOps.Snapshot.Response { try await store.makeSnapshot() }
    func snapshotPhotos(_ id: UUID, after: String?) async throws -> SyncOps.SnapshotPhotos.Response {
        try store.snapshotPhotos(id, after: after, limit: 2_000)
    }
    func readSnapshot(_ id: UUID, offset: Int) async throws -> Data { try store.readSnapshot(id, offset: offset, length: 1 << 20) }
    func snapshotDone(_ id: UUID) async throws { _ = store.removeSnapshot(id) }
    func writeSnapshot(_ id: UUID, offset: Int, bytes: Data, total: Int) async throws {
        _ = try await store.writeSnapshot(id, offset: offset, bytes: bytes, total: total)
    }
    func install(_ request: SyncOps.Install.Request) async throws -> SyncOps.Install.Response { try await store.installSnapshot(request) }
}

/// `count` stores in fresh temporary folders, removed afterwards.
func withReplicas<T>(_ count: Int, samples: Bool = false, _ body: ([LocalReplica]) async throws -> T) async throws -> T {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("rv-sync-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    var replicas: [LocalReplica] = []
    for index in 0..<count {
        let store = try RecipeStore(folder: root.appendingPathComponent("replica-\(index)"))
        if samples { _ = try await store.loadSamples() }
        replicas.append(LocalReplica(store: store))
    }
    let result = try await body(replicas)
    for replica in replicas { try replica.store.close() }
    return result
}

/// Syncs every pair until nothing changes (bounded): what the worker does for a set of replicas.
@discardableResult
func syncAll(_ replicas: [LocalReplica], pageSize: Int = 200, snapshotAbove: Int = SyncEngine.snapshotThreshold) async throws -> Int {
    var total = 0
    for _ in 0..<6 {
        var changed = 0
        for i in replicas.indices {
            for j in replicas.indices where i < j {
                let (aToB, bToA) = try await SyncEngine.sync(replicas[i], replicas[j], pageSize: pageSize, snapshotAbove: snapshotAbove)
                changed += aToB.changed + bToA.changed
            }
        }
        total += changed
        if changed == 0 { return total }
    }
    throw SyncTestError("replicas still changing after 6 rounds of syncing every pair")
}

struct SyncTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Bytes that start like a JPEG, `count` long, the same for the same `seed`.
func jpegBytes(seed: UInt64, count: Int = 3_000) -> Data {
    var generator = SplitMix(seed: seed)
    var data = Data([0xFF, 0xD8, 0xFF, 0xE0])
    data.append(contentsOf: (4..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
    return data
}

extension RecipeStore {
    /// The recipes of `origin`, by name.
    func recipes(origin: RecipeOrigin) async throws -> [Recipe] {
        var found: [Recipe] = []
        for summary in try await listRecipes(.init(origin: origin, limit: 200)).recipes {
            found.append(try await recipe(summary.id))
        }
        return found.sorted { $0.name < $1.name }
    }
}

/// The first lines where two replicas' dumps differ ("" when they hold the same).
func difference(_ a: LocalReplica, _ b: LocalReplica) async throws -> String {
    // By bytes: Swift calls text in its two Unicode forms equal, which the tables, exports and peers do not.
    let left = try await a.store.canonicalDump().split(separator: "\n").map { Array($0.utf8) }
    let right = try await b.store.canonicalDump().split(separator: "\n").map { Array($0.utf8) }
    guard left != right else { return "" }
    func shown(_ lines: Set<[UInt8]>) -> [String] { lines.map { String(decoding: $0, as: UTF8.self).debugDescription }.sorted() }
    let onlyLeft = shown(Set(left).subtracting(right)).prefix(4)
    let onlyRight = shown(Set(right).subtracting(left)).prefix(4)
    return "only in \(a.name): \(onlyLeft.joined(separator: " ¶ "))\nonly in \(b.name): \(onlyRight.joined(separator: " ¶ "))"
}

/// Records an issue naming the differing lines when two replicas do not hold the same content.
func expectSameContent(_ a: LocalReplica, _ b: LocalReplica, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let diff = try await difference(a, b)
    #expect(diff.isEmpty, "\(diff)", sourceLocation: sourceLocation)
    // Each replica's change feed says what its tables hold: what it passes on is what it answers from.
    for replica in [a, b] {
        let disagreements = try await replica.store.feedDisagreements()
        #expect(disagreements.isEmpty, "\(replica.name)'s feed and tables disagree on \(disagreements)", sourceLocation: sourceLocation)
    }
}

/// Syncs every pair until nothing changes, then records an issue for any replica still holding a record or holding
/// other content than the first.
func expectConverged(_ replicas: [LocalReplica], sourceLocation: SourceLocation = #_sourceLocation) async throws {
    try await syncAll(replicas)
    for replica in replicas {
        let held = try await replica.store.heldRecords()
        #expect(held.isEmpty, "\(replica.name) still holds \(held.map(\.id))", sourceLocation: sourceLocation)
    }
    for replica in replicas.dropFirst() { try await expectSameContent(replicas[0], replica, sourceLocation: sourceLocation) }
}

/// The SHA-256 of photo bytes, as photo blobs are named.
enum PhotoBlobsProbe {
    static func hash(_ bytes: Data) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }
}

/// A test endpoint that passes every call on to another; a wrapper implements only the calls it changes.
protocol ForwardingEndpoint: SyncEndpoint {
    /// Where the calls go (it may change between calls).
    var forwardee: any SyncEndpoint { get }
}

extension ForwardingEndpoint {
    var name: String { forwardee.name }
    func info() async throws -> SyncOps.Info.Response { try await forwardee.info() }
    func changes(since: Int, exclude: String?, limit: Int, seen: SyncOps.SeenWrite?, sinceMark: String?,
                 seenWrites: [SyncOps.SeenWrite]?) async throws -> SyncOps.Changes.Response {
        try await forwardee.changes(since: since, exclude: exclude, limit: limit, seen: seen, sinceMark: sinceMark, seenWrites: seenWrites)
    }
    func pendingCount(since: Int, exclude: String?) async throws -> Int { try await forwardee.pendingCount(since: since, exclude: exclude) }
    func missingPhotos(_ hashes: [String]) async throws -> [String] { try await forwardee.missingPhotos(hashes) }
    func photo(sha256: String) async throws -> Data { try await forwardee.photo(sha256: sha256) }
    func photos(_ hashes: [String]) async throws -> PhotoBatch { try await forwardee.photos(hashes) }
    func putPhoto(sha256: String, bytes: Data) async throws -> Bool { try await forwardee.putPhoto(sha256: sha256, bytes: bytes) }
    func putPhotos(_ photos: [(sha256: String, bytes: Data)]) async throws -> Int { try await forwardee.putPhotos(photos) }
    func apply(from: String, records: [SyncRecord], cursor: Int?, to: String?, after: Int?, seen: SyncOps.SeenWrite?,
               cursorMark: String?, unavailablePhotos: [String]?) async throws -> SyncOps.Apply.Response {
        try await forwardee.apply(from: from, records: records, cursor: cursor, to: to, after: after, seen: seen, cursorMark: cursorMark,
                                  unavailablePhotos: unavailablePhotos)
    }
    func retire(_ ids: [String]) async throws -> SyncOps.Apply.Response { try await forwardee.retire(ids) }
    func cursor(peer: String) async throws -> SyncOps.Cursor.Response { try await forwardee.cursor(peer: peer) }
    func snapshot() async throws -> SyncOps.Snapshot.Response { try await forwardee.snapshot() }
    func snapshotPhotos(_ id: UUID, after: String?) async throws -> SyncOps.SnapshotPhotos.Response {
        try await forwardee.snapshotPhotos(id, after: after)
    }
    func readSnapshot(_ id: UUID, offset: Int) async throws -> Data { try await forwardee.readSnapshot(id, offset: offset) }
    func snapshotDone(_ id: UUID) async throws { try await forwardee.snapshotDone(id) }
    func writeSnapshot(_ id: UUID, offset: Int, bytes: Data, total: Int) async throws {
        try await forwardee.writeSnapshot(id, offset: offset, bytes: bytes, total: total)
    }
    func install(_ request: SyncOps.Install.Request) async throws -> SyncOps.Install.Response { try await forwardee.install(request) }
}
