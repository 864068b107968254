import Foundation
import RecipeModel
import RecipeProtocol
import RecipeStore
import ReplicaSync
import Testing

/// A photo blob that is gone from a replica's disk, or whose bytes no longer match their hash (a disk fault,
/// a file removed or edited by hand), never stops a sync and comes back from any replica that still holds it.
@Suite("Replica sync: photo blobs lost or damaged on disk")
struct LostBlobTests {
    /// The file a replica keeps `sha256` in.
    static func blobFile(_ replica: LocalReplica, _ sha256: String) -> URL {
        replica.store.folder.appendingPathComponent(RecipeVault.photoFolderName)
            .appendingPathComponent(String(sha256.prefix(2))).appendingPathComponent(sha256)
    }

    /// How a stored blob is lost from the disk.
    enum Loss: String, CaseIterable, CustomTestStringConvertible {
        /// The file is gone.
        case removed
        /// One byte flipped.
        case damaged
        /// Its reads fail with an input/output error, as a failing disk's would (a link to a file whose reads do).
        case unreadable
        /// A folder has its name.
        case folder
        /// The system will not read it for a reason that is not the photo's, as a permission would (a link to a file
        /// whose reads fail with "Invalid argument": the tests may run as root, whom permissions do not stop). Only a
        /// person can mend it, so it is not among `allCases`, the losses a sync heals.
        case refused

        static let allCases: [Loss] = [.removed, .damaged, .unreadable, .folder]

        var testDescription: String { rawValue }
        /// Whether the loss is found only by reading the file (a file removed, or a folder in its place, is seen
        /// missing at once).
        var foundByReading: Bool { self == .damaged || self == .unreadable || self == .refused }
    }

    /// Loses a stored blob from the disk, as `loss` says.
    static func lose(_ replica: LocalReplica, _ sha256: String, _ loss: Loss) throws {
        let file = blobFile(replica, sha256)
        switch loss {
        case .damaged:
            var bytes = try Data(contentsOf: file)
            bytes[bytes.count / 2] ^= 0xFF
            try bytes.write(to: file)
        case .removed:
            try FileManager.default.removeItem(at: file)
        case .unreadable:
            try FileManager.default.removeItem(at: file)
            try FileManager.default.createSymbolicLink(atPath: file.path, withDestinationPath: "/proc/self/mem")
        case .folder:
            try FileManager.default.removeItem(at: file)
            try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
        case .refused:
            try FileManager.default.removeItem(at: file)
            try FileManager.default.createSymbolicLink(atPath: file.path, withDestinationPath: "/proc/self/clear_refs")
        }
    }

    @Test("a blob damaged, removed, unreadable, replaced by a folder, or refused to the storage, on the replica a sync reads from: the sync goes on, the record arrives without it (the blob lost at the target too, not held), and the blob comes back from a third replica (to the source too, unless the file is one only a person can mend)",
          arguments: Loss.allCases + [.refused])
    func lostAtTheSource(loss: Loss) async throws {
        try await withReplicas(3) { replicas in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Bread"))
            let bytes = jpegBytes(seed: 21, count: 40_000)
            let hash = try await a.store.addPhoto(recipeID: recipe.id, bytes: bytes, position: nil).last!.sha256
            _ = try await SyncEngine.pull(from: a, to: c)
            try Self.lose(a, hash, loss)
            let (later, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Later"))

            // a → b: the blob cannot be sent; the record naming it arrives all the same, its photo lost at b as at a (not
            // held for a blob that may never come), the rest arrives, nothing fails (an unreadable file or a folder in
            // its place ended the sync at this photo before).
            let report = try await SyncEngine.pull(from: a, to: b)
            #expect(report.photos == 0 && report.unavailablePhotos == [hash], "the report counts the blob neither side held")
            #expect(try await b.store.recipe(later.id).name == "Later")
            #expect(try await b.store.heldRecords().isEmpty)
            #expect(try await b.store.recipe(recipe.id).photos.map(\.sha256) == [hash])
            #expect(try await b.info().lostPhotos == [hash])
            await #expect(throws: ServiceError.self) { _ = try await b.store.photo(recipeID: recipe.id, position: 0) }
            // The damaged bytes are never served as the photo; a file refused to the storage is said with what to mend.
            let error = await #expect(throws: ServiceError.self) { _ = try await a.store.photo(recipeID: recipe.id, position: 0) }
            if loss == .refused {
                #expect(error?.code == .internalError && error?.message.contains("cannot be read (Invalid argument)") == true
                        && error?.message.contains("must be able to read every file of its data folder") == true, "\(String(describing: error))")
            }

            // Syncing with c, which holds the blob, brings it back to b, and to a unless its file is left for a person.
            try await expectConverged(replicas)
            for replica in loss == .refused ? [b, c] : replicas {
                #expect(try await replica.store.photo(recipeID: recipe.id, position: 0).1 == bytes, "\(replica.name)")
            }
            if loss == .refused {
                #expect(try await b.store.heldRecords().isEmpty)
                let file = Self.blobFile(a, hash)
                #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: file.path)) == "/proc/self/clear_refs", "left as it is")
            }
        }
    }

    @Test("a photo removed, and a recipe deleted, while a folder stands in its blob's place: both are done and said so, the folder moved aside, and the other replica follows")
    func removalPastAFolder() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let (soup, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Soup"))
            let (stew, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Stew"))
            let soupPhoto = try await a.store.addPhoto(recipeID: soup.id, bytes: jpegBytes(seed: 28, count: 9_000), position: nil)[0]
            let stewHash = try await a.store.addPhoto(recipeID: stew.id, bytes: jpegBytes(seed: 29, count: 9_000), position: nil)[0].sha256
            try await syncAll(replicas)
            for hash in [soupPhoto.sha256, stewHash] {
                try Self.lose(a, hash, .folder)
                try Data("in the way".utf8).write(to: Self.blobFile(a, hash).appendingPathComponent("note.txt"))
            }
            // Both used to fail after the change was committed ("cannot remove photo …: Is a directory").
            _ = try await a.store.removePhoto(recipeID: soup.id, photoID: soupPhoto.id)
            #expect(try await a.store.deleteRecipe(id: stew.id))
            for hash in [soupPhoto.sha256, stewHash] {
                let file = Self.blobFile(a, hash)
                #expect(!FileManager.default.fileExists(atPath: file.path), "the blob's name is free")
                #expect(FileManager.default.fileExists(atPath: file.deletingLastPathComponent().appendingPathComponent(".\(hash).damaged/note.txt").path))
            }
            try await expectConverged(replicas)
            #expect(try await b.store.recipe(soup.id).photos.isEmpty)
            await #expect(throws: ServiceError.self) { _ = try await b.store.recipe(stew.id) }
        }
    }

    @Test("a blob whose every copy is gone: the record naming it arrives everywhere without it, the photo lost on every replica; the blob put back on any one comes back to all, and removing the photo instead reaches all")
    func goneEverywhere() async throws {
        try await withReplicas(3) { replicas in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Stew"))
            let (pie, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Pie"))
            let bytes = jpegBytes(seed: 26, count: 10_000)
            let photos = try await a.store.addPhoto(recipeID: recipe.id, bytes: bytes, position: nil)
            let piePhoto = try await a.store.addPhoto(recipeID: pie.id, bytes: jpegBytes(seed: 27, count: 10_000), position: nil)[0]
            try Self.lose(a, photos[0].sha256, .damaged)
            try Self.lose(a, piePhoto.sha256, .removed)
            // The replicas agree at once: every one holds both recipes, each naming a photo no replica holds (it used to
            // wait at b and c until a person removed the photo).
            try await expectConverged(replicas)
            for replica in replicas {
                #expect(try await replica.store.heldRecords().isEmpty, "\(replica.name)")
                #expect(try await replica.store.recipe(recipe.id).photos.map(\.sha256) == [photos[0].sha256], "\(replica.name)")
                #expect(Set(try await replica.info().lostPhotos ?? []) == [photos[0].sha256, piePhoto.sha256], "\(replica.name)")
                await #expect(throws: ServiceError.self) { _ = try await replica.store.photo(recipeID: recipe.id, position: 0) }
            }
            // The blob turns up on c (a person copies it back from somewhere): the next syncs bring it to every replica.
            #expect(try c.store.putPhotoBlob(sha256: photos[0].sha256, bytes: bytes))
            try await expectConverged(replicas)
            for replica in replicas {
                #expect(try await replica.store.photo(recipeID: recipe.id, position: 0).1 == bytes, "\(replica.name)")
                #expect(try await replica.info().lostPhotos == [piePhoto.sha256], "\(replica.name)")
            }
            // The other is gone for good: someone removes it where they see it missing, and that reaches every replica.
            _ = try await b.store.removePhoto(recipeID: pie.id, photoID: piePhoto.id)
            try await expectConverged(replicas)
            for replica in replicas {
                #expect(try await replica.store.recipe(pie.id).photos.isEmpty, "\(replica.name)")
                #expect(try await replica.info().lostPhotos == nil, "\(replica.name)")
            }
        }
    }

    /// A storage of a release before `unavailablePhotos`, as the sync engine sees it: its `sync.info` does not say it
    /// takes them (`upgraded` says it again).
    final class OlderRelease: ForwardingEndpoint, @unchecked Sendable {
        let base: LocalReplica
        var forwardee: any SyncEndpoint { base }
        private let lock = NSLock()
        private var isUpgraded = false
        init(_ base: LocalReplica) { self.base = base }
        func upgrade() { lock.withLock { isUpgraded = true } }
        func info() async throws -> SyncOps.Info.Response {
            var info = try await base.info()
            if !lock.withLock({ isUpgraded }) { info.takesUnavailablePhotos = nil }
            return info
        }
    }

    @Test("a storage of the release before holds a record whose blob no replica could send, as it did; upgraded, its next sync takes the record without the blob")
    func olderReleaseHolds() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], OlderRelease(replicas[1]))
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Stew"))
            let hash = try await a.store.addPhoto(recipeID: recipe.id, bytes: jpegBytes(seed: 30, count: 10_000), position: nil)[0].sha256
            try Self.lose(a, hash, .removed)
            let held = try await SyncEngine.pull(from: a, to: b)
            #expect(held.unavailablePhotos.isEmpty, "an older release is sent none, so none is counted")
            #expect(try await b.base.store.heldRecords().map(\.id) == [recipe.id.uuidString])
            #expect(try await b.base.store.heldRecords().first?.missingPhotos == [hash])
            b.upgrade()
            let report = try await SyncEngine.pull(from: a, to: b)
            #expect(report.changed == 1 && report.held == 0 && report.unavailablePhotos == [hash], "taken by the waiting step")
            #expect(try await b.base.store.heldRecords().isEmpty)
            #expect(try await b.base.store.recipe(recipe.id).photos.map(\.sha256) == [hash])
            #expect(try await b.info().lostPhotos == [hash])
            try await expectSameContent(a, b.base)
        }
    }

    @Test("unavailablePhotos is checked before anything is applied: at most 10,000 SHA-256s, each 64 lowercase hex digits, the bad one named")
    func unavailablePhotosChecked() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Stew"))
            let hash = try await a.store.addPhoto(recipeID: recipe.id, bytes: jpegBytes(seed: 31, count: 10_000), position: nil)[0].sha256
            let records = try await a.store.syncChanges(since: 0, exclude: nil, limit: 100).records
            let from = try await a.info().replicaID
            for (bad, message) in [
                ([hash, "../../etc/passwd"], #"unavailablePhotos[1] "../../etc/passwd" is not a SHA-256 (64 lowercase hex digits)"#),
                ([hash.uppercased()], "unavailablePhotos[0] \"\(hash.uppercased())\" is not a SHA-256 (64 lowercase hex digits)"),
                (Array(repeating: hash, count: 10_001), "unavailablePhotos names 10001 blobs; at most 10000 at a time"),
            ] {
                let error = await #expect(throws: ServiceError.self) {
                    _ = try await b.store.applySync(from: from, records: records, cursor: 5, unavailablePhotos: bad)
                }
                #expect(error?.code == .invalidArgument && error?.message == message)
            }
            #expect(try await b.store.listRecipes(.init(limit: 10)).recipes.isEmpty, "nothing applied")
            #expect(try await b.store.syncCursor(peer: from).seq == 0, "the cursor did not move")
            // Named but not among the records' blobs, or held here already: nothing is noted lost for it.
            let other = String(repeating: "ab", count: 32)
            _ = try await b.store.applySync(from: from, records: records, cursor: 5, unavailablePhotos: [other, hash])
            #expect(try await b.info().lostPhotos == [hash])
        }
    }

    @Test("a blob damaged, unreadable or replaced by a folder on the replica that receives it is replaced by the intact one at the next sync",
          arguments: [Loss.damaged, .unreadable, .folder])
    func damagedAtTheTarget(loss: Loss) async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Soup"))
            let bytes = jpegBytes(seed: 22, count: 30_000)
            let hash = try await a.store.addPhoto(recipeID: recipe.id, bytes: bytes, position: nil).last!.sha256
            _ = try await SyncEngine.pull(from: a, to: b)
            try Self.lose(b, hash, loss)
            await #expect(throws: ServiceError.self) { _ = try await b.store.photo(recipeID: recipe.id, position: 0) }
            // Nothing changed in the feeds: only the blob needs to go, and the next sync sends it.
            try await syncAll(replicas)
            #expect(try await b.store.photo(recipeID: recipe.id, position: 0).1 == bytes)
        }
    }

    @Test("a backup leaves out a lost blob and says so; a storage started on the copy gets it back at its first sync")
    func backupWithALostBlob() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Pie"))
            let bytes = jpegBytes(seed: 24, count: 10_000)
            let hash = try await a.store.addPhoto(recipeID: recipe.id, bytes: bytes, position: nil).last!.sha256
            _ = try await a.store.addPhoto(recipeID: recipe.id, bytes: jpegBytes(seed: 25), position: nil)
            try await syncAll(replicas)
            try Self.lose(a, hash, .damaged)
            let folder = a.store.folder.deletingLastPathComponent().appendingPathComponent("backup")
            let backup = try await a.store.backup(to: folder.path)
            #expect(backup.lostPhotos == [hash] && backup.photos == 1)
            let copy = LocalReplica(store: try RecipeStore(folder: folder))
            #expect(try await copy.info().lostPhotos == [hash])
            try await syncAll([copy, b])
            #expect(try await copy.store.photo(recipeID: recipe.id, position: 0).1 == bytes)
            try copy.store.close()
        }
    }

    @Test("a blob removed, or replaced by a folder, while the storage was stopped is missed from its start, and comes back at the next sync",
          arguments: [Loss.removed, .folder])
    func removedWhileStopped(loss: Loss) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rv-lost-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        var a = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("a")))
        let b = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("b")))
        let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Cake"))
        let bytes = jpegBytes(seed: 23, count: 20_000)
        let hash = try await a.store.addPhoto(recipeID: recipe.id, bytes: bytes, position: nil).last!.sha256
        try await syncAll([a, b])
        try a.store.close()
        try Self.lose(a, hash, loss)
        a = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("a")))
        #expect(try await a.info().lostPhotos == [hash])
        try await syncAll([a, b])
        #expect(try await a.store.photo(recipeID: recipe.id, position: 0).1 == bytes)
        #expect(try await a.info().lostPhotos == nil)
        try a.store.close()
        try b.store.close()
    }

    @Test("a conflict on a recipe whose photo is lost here is resolved all the same; the photo comes back at the next sync (seed 12406217097409647674)",
          arguments: Loss.allCases)
    func resolvedWhilePhotoLost(loss: Loss) async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let bytes = jpegBytes(seed: 91, count: 8_000)
            let recipe = try await FindingScenarios.notesConflict(a, b)
            let photos = try await a.store.addPhoto(recipeID: recipe.id, bytes: bytes, position: nil)
            try await syncAll([a, b])
            try Self.lose(b, photos[0].sha256, loss)
            let conflict = try #require(try await b.store.conflicts().first)
            _ = try await b.store.resolveConflict(id: conflict.id)
            try await expectConverged([a, b])
            // Damaged bytes are found when read (never served), and the next sync brings the blob back.
            if loss.foundByReading { await #expect(throws: ServiceError.self) { _ = try await b.store.photo(recipeID: recipe.id, position: 0) } }
            try await expectConverged([a, b])
            for replica in [a, b] {
                #expect(try await replica.store.conflicts().isEmpty, "\(replica.name)")
                #expect(try await replica.store.photo(recipeID: recipe.id, position: 0).1 == bytes, "\(replica.name)")
            }
        }
    }
}
