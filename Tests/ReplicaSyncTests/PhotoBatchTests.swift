import Foundation
import Synchronization
import RecipeModel
import RecipeProtocol
import RecipeStore
import ReplicaSync
import Testing

@Suite("Photo blobs sent in batches")
struct PhotoBatchTests {
    private func blob(_ seed: UInt64, count: Int = 4_000) -> (sha256: String, bytes: Data) {
        let bytes = jpegBytes(seed: seed, count: count)
        return (PhotoBlobsProbe.hash(bytes), bytes)
    }

    @Test("a batch is stored whole: new ones counted, ones already here and repeats not, each readable and checked")
    func storedWhole() async throws {
        try await withReplicas(1) { (replicas: [LocalReplica]) async throws in
            let store = replicas[0].store
            let blobs = (1...5).map { blob($0) }
            #expect(try store.putPhotoBlob(sha256: blobs[0].sha256, bytes: blobs[0].bytes))
            #expect(try store.putPhotoBlobs(blobs + [blobs[3]]) == 4)
            #expect(try store.missingPhotos(blobs.map(\.sha256)).isEmpty)
            for blob in blobs { #expect(try store.photoBlob(sha256: blob.sha256) == blob.bytes) }
            #expect(try store.putPhotoBlobs(blobs) == 0)
        }
    }

    @Test("one damaged, oversized or misnamed blob refuses the batch with which one and why, and stores none of it")
    func oneBadRefusesAll() async throws {
        try await withReplicas(1) { (replicas: [LocalReplica]) async throws in
            let store = replicas[0].store
            let good = (21...23).map { blob($0) }
            var damaged = blob(24)
            damaged.bytes[100] ^= 0xFF
            let tooLarge = blob(25, count: RecipeVault.maxPhotoBytes + 1)
            let cases: [(sha256: String, bytes: Data, code: ErrorCode)] = [
                (damaged.sha256, damaged.bytes, .photoDamaged),
                (tooLarge.sha256, tooLarge.bytes, .photoTooLarge),
                ("../../etc/passwd", good[0].bytes, .invalidArgument),
                (good[0].sha256.uppercased(), good[0].bytes, .invalidArgument),
            ]
            for bad in cases {
                let batch = [good[0], good[1], (bad.sha256, bad.bytes), good[2]]
                let error = try #require(throws: ServiceError.self) { try store.putPhotoBlobs(batch) }
                #expect(error.code == bad.code)
                #expect(error.message.hasPrefix("photo 3 of 4: "))
                #expect(error.message.hasSuffix("none of the 4 photos of this request was stored"))
                #expect(try store.missingPhotos(good.map(\.sha256)).count == 3)
            }
        }
    }

    @Test("an initial sync of many photos sends them in batches and the target holds every one")
    func syncInBatches() async throws {
        try await withReplicas(2) { (replicas: [LocalReplica]) async throws in
            let (a, b) = (replicas[0], replicas[1])
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Many photos"))
            var hashes: [String] = []
            for seed in 100..<110 {
                let bytes = jpegBytes(seed: UInt64(seed), count: 5_000)
                _ = try await a.store.addPhoto(recipeID: recipe.id, bytes: bytes, position: nil)
                hashes.append(PhotoBlobsProbe.hash(bytes))
            }
            let counting = CountingEndpoint(base: b)
            let report = try await SyncEngine.pull(from: a, to: counting)
            #expect(report.photos == 10)
            #expect(counting.batches.sizes == [10])
            #expect(try b.store.missingPhotos(hashes).isEmpty)
            #expect(try await b.store.recipe(recipe.id).photos.map(\.sha256) == hashes)
        }
    }

    /// Two recipes of ten photos each on `a`; their hashes.
    private func twentyPhotos(on a: LocalReplica) async throws -> [String] {
        var hashes: [String] = []
        for recipeIndex in 0..<2 {
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Photos \(recipeIndex)"))
            for seed in 0..<10 {
                let bytes = jpegBytes(seed: UInt64(200 + recipeIndex * 10 + seed), count: 5_000)
                _ = try await a.store.addPhoto(recipeID: recipe.id, bytes: bytes, position: nil)
                hashes.append(PhotoBlobsProbe.hash(bytes))
            }
        }
        return hashes
    }

    @Test("more photos than a batch holds go in full batches, the next filled while the last is written, and all arrive")
    func severalBatches() async throws {
        try await withReplicas(2) { (replicas: [LocalReplica]) async throws in
            let (a, b) = (replicas[0], replicas[1])
            let hashes = try await twentyPhotos(on: a)
            let counting = CountingEndpoint(base: b)
            let report = try await SyncEngine.pull(from: a, to: counting)
            #expect(report.photos == 20)
            #expect(counting.batches.sizes == [SyncOps.PutPhotos.maxPhotos, 20 - SyncOps.PutPhotos.maxPhotos])
            #expect(try b.store.missingPhotos(hashes).isEmpty)
            try await expectSameContent(a, b)
        }
    }

    @Test("photos are read in batches too, one request for what one batch takes; a blob lost at the source is counted, the rest arrive")
    func readInBatches() async throws {
        try await withReplicas(2) { (replicas: [LocalReplica]) async throws in
            let (a, b) = (replicas[0], replicas[1])
            let hashes = try await twentyPhotos(on: a)
            let source = CountingEndpoint(base: a)
            // One blob gone from the source's folder: it is read as missing, not as a failure of the read.
            let lost = hashes[7]
            try FileManager.default.removeItem(at: a.store.folder.appendingPathComponent(RecipeVault.photoFolderName)
                .appendingPathComponent(String(lost.prefix(2))).appendingPathComponent(lost))
            let report = try await SyncEngine.pull(from: source, to: b)
            // The page is read again twice for the blob the source lost (it may have been replaced meanwhile): those
            // reads ask for it alone, the others being at the target by then.
            #expect(source.reads.sizes == [SyncOps.PutPhotos.maxPhotos, 20 - SyncOps.PutPhotos.maxPhotos, 1, 1])
            #expect(source.singleReads.sizes.isEmpty, "no photo read one at a time")
            #expect(report.photos == 19, "the photos sent before the page was read again count")
            #expect(try b.store.missingPhotos(hashes) == [lost])
        }
    }

    @Test("a read stops at its byte limit and the rest is asked again; blobs not held are missing; what was not asked is dropped")
    func readsStopAtTheirLimit() async throws {
        try await withReplicas(1) { (replicas: [LocalReplica]) async throws in
            let store = replicas[0].store
            let blobs = (31...36).map { blob($0, count: 5_000) }
            _ = try store.putPhotoBlobs(blobs)
            let absent = blob(37).sha256
            let asked = [blobs[0].sha256, absent, blobs[1].sha256, blobs[2].sha256, blobs[3].sha256]
            // 12,000 bytes: two blobs of 5,000 go, the third would pass it; the absent one before it is missing.
            let first = try store.photoBlobs(asked, maxBytes: 12_000)
            #expect(first.blobs.map(\.sha256) == [blobs[0].sha256, blobs[1].sha256] && first.missing == [absent])
            #expect(first.blobs.map(\.bytes) == [blobs[0].bytes, blobs[1].bytes])
            // The first blob goes whatever its size.
            #expect(try store.photoBlobs([blobs[4].sha256], maxBytes: 1).blobs.count == 1)
            // Collected in rounds, in the order asked.
            var rounds = 0
            let all = try await PhotoBatch.collect(asked + [blobs[5].sha256], name: "test") { ask in
                rounds += 1
                let read = try store.photoBlobs(ask, maxBytes: 12_000)
                return PhotoBatch(found: read.blobs, missing: read.missing)
            }
            #expect(rounds == 3)
            #expect(all.found.map(\.sha256) == [blobs[0], blobs[1], blobs[2], blobs[3], blobs[5]].map(\.sha256) && all.missing == [absent])
            // A replica that sends what was not asked, or answers nothing, is not believed.
            let extra = try await PhotoBatch.collect([blobs[0].sha256], name: "test") { _ in
                PhotoBatch(found: [blobs[1], blobs[0]], missing: [absent])
            }
            #expect(extra.found.map(\.sha256) == [blobs[0].sha256] && extra.missing.isEmpty)
            let error = await #expect(throws: ServiceError.self) {
                _ = try await PhotoBatch.collect([blobs[0].sha256], name: "test") { _ in PhotoBatch(found: [blobs[1]]) }
            }
            #expect(error?.message.contains("answered none of the 1 photo asked for") == true)
        }
    }

    @Test("a batch the target refuses ends the sync with its error: no batch goes after it, no record is applied")
    func refusedBatchStops() async throws {
        try await withReplicas(2) { (replicas: [LocalReplica]) async throws in
            let (a, b) = (replicas[0], replicas[1])
            _ = try await twentyPhotos(on: a)
            let held = try await b.store.recipeCount()
            let failing = CountingEndpoint(base: b, failPuts: true)
            let error = try await #require(throws: ServiceError.self) { _ = try await SyncEngine.pull(from: a, to: failing) }
            #expect(error.code == .shuttingDown)
            #expect(failing.batches.sizes == [SyncOps.PutPhotos.maxPhotos])
            #expect(try await b.store.recipeCount() == held)
            // The same by snapshot: the file's transfer beside the photos stops with them.
            let bySnapshot = CountingEndpoint(base: b, failPuts: true)
            await #expect(throws: ServiceError.self) { _ = try await SyncEngine.pull(from: a, to: bySnapshot, snapshotAbove: 0) }
            let sent = (bySnapshot.batches.sizes, bySnapshot.snapshotWrites.sizes)
            try await Task.sleep(for: .milliseconds(300))
            #expect(bySnapshot.batches.sizes == sent.0 && bySnapshot.snapshotWrites.sizes == sent.1, "nothing is sent after the sync ended")
            #expect(try await b.info().empty == true)
        }
    }

    @Test("a snapshot whose file the target cannot take ends the sync, and nothing more of it is sent afterwards")
    func refusedSnapshotFileStops() async throws {
        try await withReplicas(2) { (replicas: [LocalReplica]) async throws in
            let (a, b) = (replicas[0], replicas[1])
            _ = try await twentyPhotos(on: a)
            let failing = CountingEndpoint(base: b, failSnapshotWrites: true)
            let error = try await #require(throws: ServiceError.self) { _ = try await SyncEngine.pull(from: a, to: failing, snapshotAbove: 0) }
            #expect(error.code == .shuttingDown)
            let sent = (failing.batches.sizes, failing.snapshotWrites.sizes)
            #expect(sent.1 == [1], "the file's first chunk was refused and no other was sent")
            try await Task.sleep(for: .milliseconds(300))
            #expect(failing.batches.sizes == sent.0 && failing.snapshotWrites.sizes == sent.1, "nothing is sent after the sync ended")
            #expect(try await b.info().empty == true)
            // The source let the failed copy go: the next sync copies again and succeeds.
            _ = try await SyncEngine.pull(from: a, to: b, snapshotAbove: 0)
            try await expectSameContent(a, b)
        }
    }
}

/// A replica that remembers the size of each batch of photos it was sent.
private struct CountingEndpoint: ForwardingEndpoint {
    let base: LocalReplica
    /// Every batch of photos is refused (after it is counted).
    var failPuts = false
    /// Every chunk of a snapshot file is refused (after it is counted, as 1).
    var failSnapshotWrites = false
    let batches = BatchLog()
    let snapshotWrites = BatchLog()
    /// The photos asked for in each read of several, and each read of one.
    let reads = BatchLog()
    let singleReads = BatchLog()
    static let refused = ServiceError(.shuttingDown, "the target is refusing writes")
    var forwardee: any SyncEndpoint { base }
    func photo(sha256: String) async throws -> Data {
        singleReads.record(1)
        return try await base.photo(sha256: sha256)
    }
    func photos(_ hashes: [String]) async throws -> PhotoBatch {
        reads.record(hashes.count)
        return try await base.photos(hashes)
    }
    func putPhoto(sha256: String, bytes: Data) async throws -> Bool {
        batches.record(1)
        return try await base.putPhoto(sha256: sha256, bytes: bytes)
    }
    func putPhotos(_ photos: [(sha256: String, bytes: Data)]) async throws -> Int {
        batches.record(photos.count)
        if failPuts { throw Self.refused }
        return try await base.putPhotos(photos)
    }
    func writeSnapshot(_ id: UUID, offset: Int, bytes: Data, total: Int) async throws {
        snapshotWrites.record(1)
        if failSnapshotWrites { throw Self.refused }
        try await base.writeSnapshot(id, offset: offset, bytes: bytes, total: total)
    }
}

private final class BatchLog: Sendable {
    private let log = Mutex<[Int]>([])
    func record(_ size: Int) { log.withLock { $0.append(size) } }
    var sizes: [Int] { log.withLock { $0 } }
}
