import Foundation
import Messaging
import RecipeModel
import RecipeProtocol
import RecipeStore

extension Routes {
    /// Every `recipe-storage` operation, answered from `store`.
    public mutating func addStorageOperations(store: RecipeStore, publishEndpoint: String? = nil,
                                              announce: @escaping @Sendable (String) -> Void = { _ in }) {
        addSyncOperations(store: store, publishEndpoint: publishEndpoint, announce: announce)
        handle(RecipeOps.Create.self) { request, _ in
            let (recipe, created) = try await store.createRecipe(id: request.id ?? UUID.timeOrdered(), request.recipe, createdAt: request.createdAt)
            return .init(recipe: recipe, created: created)
        }
        handle(RecipeOps.Get.self) { request, _ in try await store.recipeDetail(request.id, servings: request.servings) }
        handle(RecipeOps.Update.self) { request, _ in
            try await store.updateRecipe(id: request.id, expectedVersion: request.expectedVersion, request.recipe)
        }
        handle(RecipeOps.Delete.self) { request, _ in Deleted(deleted: try await store.deleteRecipe(id: request.id)) }
        handle(RecipeOps.List.self) { request, _ in try await store.listRecipes(request) }
        handle(RecipeOps.Search.self) { request, _ in
            .init(hits: try await store.searchRecipes(request.text, limit: request.limit ?? 20))
        }
        handle(RecipeOps.Duplicate.self) { request, _ in
            try await store.duplicateRecipe(id: request.id, newID: request.newID ?? UUID.timeOrdered(), name: request.name)
        }
        handle(RecipeOps.Favorite.self) { request, _ in try await store.setFavorite(id: request.id, request.isFavorite) }
        handle(RecipeOps.Rate.self) { request, _ in try await store.rate(id: request.id, request.rating) }
        handle(RecipeOps.CanMake.self) { request, _ in
            let answer = try await store.canMake(have: request.have, maxMissing: request.maxMissing ?? 0,
                                                 ignoreStaples: request.ignoreStaples ?? true, limit: request.limit ?? RecipeOps.CanMake.defaultLimit)
            return .init(results: answer.results, matching: answer.matching)
        }

        handle(BookOps.Create.self) { request, _ in
            try await store.createBook(id: request.id ?? UUID.timeOrdered(), title: request.title, author: request.author)
        }
        handle(BookOps.List.self) { request, _ in try await store.bookPage(limit: request.limit, after: request.after) }
        handle(BookOps.Get.self) { request, _ in try await store.book(request.id, limit: request.limit, after: request.after) }
        handle(BookOps.Update.self) { request, _ in
            guard let id = request.id else { throw ServiceError(.invalidBody, "body.id is missing; book.update needs the book's id") }
            return try await store.updateBook(id: id, title: request.title, author: request.author)
        }
        handle(BookOps.Delete.self) { request, _ in Deleted(deleted: try await store.deleteBook(id: request.id)) }

        handle(IngredientOps.List.self) { request, _ in
            try await store.ingredientPage(category: request.category, limit: request.limit, after: request.after)
        }
        handle(IngredientOps.Find.self) { request, _ in try await store.findIngredient(request.name) }
        handle(IngredientOps.Upsert.self) { request, _ in
            try await store.upsertIngredient(id: request.id ?? UUID.timeOrdered(), name: request.name, category: request.category,
                                             aliases: request.aliases ?? [])
        }

        handle(CookLogOps.Add.self) { request, _ in
            try await store.addCookLogEntry(id: request.id ?? UUID.timeOrdered(), recipeID: request.recipeID, cookedAt: request.cookedAt,
                                            rating: request.rating, note: request.note, servings: request.servings)
        }
        handle(CookLogOps.List.self) { request, _ in
            try await store.cookLogPage(recipeID: request.recipeID, limit: request.limit ?? 50, after: request.after)
        }
        handle(CookLogOps.Delete.self) { request, _ in Deleted(deleted: try await store.deleteCookLogEntry(id: request.id)) }

        handle(PhotoOps.Add.self) { request, context in
            .init(photos: try await store.addPhoto(recipeID: request.recipeID, bytes: try context.frame(request.photo), position: request.position))
        }
        handle(PhotoOps.ListPhotos.self) { request, _ in .init(photos: try await store.photoList(recipeID: request.recipeID)) }
        handleWithFrames(PhotoOps.Get.self) { request, _ in
            let (photo, bytes) = try await store.photo(recipeID: request.recipeID, position: request.position)
            return Reply(.init(photo: photo, bytes: FrameReference(frame: 1)), frames: [bytes])
        }
        handle(PhotoOps.Move.self) { request, _ in
            .init(photos: try await store.movePhoto(recipeID: request.recipeID, photoID: request.photoID, to: request.position))
        }
        handle(PhotoOps.Remove.self) { request, _ in
            .init(photos: try await store.removePhoto(recipeID: request.recipeID, photoID: request.photoID))
        }

        handle(RecipeOps.SaveImported.self) { request, _ in
            let (recipe, outcome) = try await store.saveImported(id: request.id ?? UUID.timeOrdered(), request.recipe, sameAs: request.sameAs)
            return .init(recipe: recipe, outcome: outcome)
        }
        handle(JobOps.Create.self) { request, _ in
            let id = request.id ?? UUID.timeOrdered()
            guard let plan = request.migration else { return try await store.createJob(id: id, urls: request.urls) }
            guard request.urls.isEmpty else { throw ServiceError(.invalidArgument, "a job is URLs or a migration, not both; urls must be empty with migration") }
            return try await store.createMigration(id: id, plan: plan)
        }
        handle(JobOps.Stage.self) { request, context in
            try await store.stageJobEntry(jobID: request.jobID, position: request.position, bytes: try context.frame(request.entry))
            return Empty()
        }
        handleWithFrames(JobOps.Entry.self) { request, _ in
            Reply(.init(entry: FrameReference(frame: 1)), frames: [try await store.jobEntry(jobID: request.jobID, position: request.position)])
        }
        handle(JobOps.Get.self) { request, _ in try await store.job(request.id) }
        handle(JobOps.Items.self) { request, _ in
            try await store.jobItems(jobID: request.jobID, view: request.view ?? .all, from: request.from ?? 0, limit: request.limit ?? 500)
        }
        handle(JobOps.List.self) { request, _ in
            .init(jobs: try await store.jobs(unfinished: request.unfinished ?? false, limit: request.limit ?? 50))
        }
        handle(JobOps.Start.self) { request, _ in
            .init(proceed: try await store.startJobItem(jobID: request.jobID, position: request.position, run: request.run))
        }
        handle(JobOps.Record.self) { request, _ in
            try await store.recordJobItem(jobID: request.jobID, position: request.position, result: request.result)
        }

        handle(StorageOps.LoadSamples.self) { _, _ in try await store.loadSamples() }
        handle(StorageOps.Stats.self) { _, _ in try await store.stats() }
        handle(StorageOps.Check.self) { request, _ in try await store.check(photos: request.photos ?? true, full: request.full ?? false) }
    }
}

extension Routes {
    /// Refuses a sync request from a worker of other sync rules than this storage's, before anything is read or applied.
    static func requireSyncRules(_ rules: Int?, of who: String) throws {
        if let mismatch = SyncRules.mismatch(rules, of: who, here: "this recipe-storage") { throw ServiceError(.unsupportedVersion, mismatch) }
    }

    /// The replica-sync operations: the change feed, photo blobs by hash, and applying another replica's changes.
    /// `announce` is told when an apply changed something (so a third replica hears of it).
    public mutating func addSyncOperations(store: RecipeStore, publishEndpoint: String?, announce: @escaping @Sendable (String) -> Void) {
        handle(SyncOps.Info.self) { _, _ in try await store.syncInfoResponse(publishEndpoint: publishEndpoint) }
        handle(SyncOps.Retire.self) { request, _ in
            let result = try await store.retireReplicas(request.ids)
            if result.changed > 0 { announce(SyncOps.Retire.name) }
            return result
        }
        handle(ConflictOps.List.self) { request, _ in try await store.conflicts(limit: request.limit, after: request.after) }
        handle(ConflictOps.Resolve.self) { request, _ in
            let conflict = try await store.resolveConflict(id: request.id)
            announce(ConflictOps.Resolve.name)
            return conflict
        }
        handle(ConflictOps.Dismiss.self) { request, _ in
            let conflict = try await store.dismissConflict(id: request.id)
            announce(ConflictOps.Dismiss.name)
            return conflict
        }
        handle(BackupOps.Backup.self) { request, _ in try await store.backup(to: request.folder) }
        handle(SyncOps.Changes.self) { request, _ in
            try Self.requireSyncRules(request.rules, of: "the recipe-worker reading this storage's changes")
            return try await store.syncChanges(since: request.since, exclude: request.exclude, limit: request.limit ?? 200, seen: request.seen,
                                               sinceMark: request.sinceMark, seenWrites: request.seenWrites)
        }
        handle(SyncOps.Pending.self) { request, _ in
            .init(count: try await store.syncPendingCount(since: request.since, exclude: request.exclude))
        }
        handle(SyncOps.MissingPhotos.self) { request, _ in
            guard request.sha256.count <= 10_000 else {
                throw ServiceError(.invalidArgument, "\(request.sha256.count) hashes asked for; at most 10000 at a time")
            }
            return .init(missing: try store.missingPhotos(request.sha256))
        }
        handleWithFrames(SyncOps.Photo.self) { request, _ in
            let bytes = try store.photoBlob(sha256: request.sha256)
            return Reply(.init(sha256: request.sha256, photo: FrameReference(frame: 1)), frames: [bytes])
        }
        handleWithFrames(SyncOps.Photos.self) { request, _ in
            guard (1...SyncOps.Photos.maxPhotos).contains(request.sha256.count) else {
                throw ServiceError(.invalidArgument, "the request names \(request.sha256.count) photos; ask for 1 to \(SyncOps.Photos.maxPhotos) at a time")
            }
            let found = try await store.syncPhotoBlobs(request.sha256, maxBytes: SyncOps.Photos.maxBytes)
            let entries = found.blobs.indices.map { SyncOps.PutPhotos.Entry(sha256: found.blobs[$0].sha256, photo: FrameReference(frame: $0 + 1)) }
            return Reply(.init(photos: entries, missing: found.missing), frames: found.blobs.map(\.bytes))
        }
        handle(SyncOps.PutPhoto.self) { request, context in
            .init(stored: try store.putPhotoBlob(sha256: request.sha256, bytes: try context.frame(request.photo)))
        }
        handle(SyncOps.PutPhotos.self) { request, context in
            guard (1...SyncOps.PutPhotos.maxPhotos).contains(request.photos.count) else {
                throw ServiceError(.invalidArgument, "the request names \(request.photos.count) photos; send 1 to \(SyncOps.PutPhotos.maxPhotos) at a time")
            }
            let blobs = try request.photos.map { (sha256: $0.sha256, bytes: try context.frame($0.photo)) }
            let total = blobs.reduce(0) { $0 + $1.bytes.count }
            guard total <= SyncOps.PutPhotos.maxBytes else {
                throw ServiceError(.invalidArgument, "the \(blobs.count) photos of this request come to \(total) bytes; send at most "
                                   + "\(SyncOps.PutPhotos.maxBytes) bytes (16 MiB) at a time; none of them was stored")
            }
            return .init(stored: try store.putPhotoBlobs(blobs))
        }
        handle(SyncOps.Apply.self) { request, _ in
            try Self.requireSyncRules(request.rules, of: "the recipe-worker sending these changes")
            let result = try await store.applySync(from: request.from, records: request.records, cursor: request.cursor,
                                                   expecting: request.to, after: request.after, seen: request.seen,
                                                   cursorMark: request.cursorMark, unavailablePhotos: request.unavailablePhotos ?? [])
            if result.changed > 0 { announce(SyncOps.Apply.name) }
            return result
        }
        handle(SyncOps.Cursor.self) { request, _ in try await store.syncCursor(peer: request.peer) }
        handle(SyncOps.Snapshot.self) { _, _ in try await store.makeSnapshot() }
        handleWithFrames(SyncOps.SnapshotRead.self) { request, _ in
            let bytes = try store.readSnapshot(request.snapshot, offset: request.offset, length: request.length ?? 4 * 1_024 * 1_024)
            return Reply(.init(offset: request.offset), frames: [bytes])
        }
        handle(SyncOps.SnapshotPhotos.self) { request, _ in
            try store.snapshotPhotos(request.snapshot, after: request.after, limit: request.limit ?? 2_000)
        }
        handle(SyncOps.SnapshotDone.self) { request, _ in .init(removed: store.removeSnapshot(request.snapshot)) }
        handle(SyncOps.SnapshotWrite.self) { request, context in
            .init(bytes: try await store.writeSnapshot(request.snapshot, offset: request.offset, bytes: try context.frame(request.data),
                                                  total: request.total))
        }
        handle(SyncOps.Install.self) { request, _ in
            let result = try await store.installSnapshot(request)
            if result.installed { announce(SyncOps.Install.name) }
            return result
        }
    }
}
