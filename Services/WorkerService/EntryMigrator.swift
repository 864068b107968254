import Foundation
import Logging
import Messaging
import RecipeMigration
import RecipeModel
import RecipeProtocol

/// Migrates one entry of another app's export: reads the entry staged in storage, turns it
/// into a recipe, makes its photos fit through the photo intake, and stores both. The
/// recipe's id comes from the app's own id for it, so the same export migrated twice finds
/// its recipes instead of adding them again.
public struct EntryMigrator: Sendable {
    let storage: MessageClientPool
    let photos: PhotoDesk
    /// Entries naming the same recipe (an export listing it twice) are stored one after the other.
    private let turns = RecipeTurns()

    public init(storage: MessageClientPool, photos: PhotoDesk) {
        self.storage = storage
        self.photos = photos
    }

    /// What became of one entry (the fields of its job item).
    public struct Outcome: Sendable, Equatable {
        public var outcome: ImportOutcome
        public var recipe: Recipe
        /// Photos that were not added, and why.
        public var photoNote: String?
    }

    public func migrate(jobID: UUID, position: Int) async throws -> Outcome {
        let reply = try await storage.send(JobOps.Entry.self, .init(jobID: jobID, position: position))
        guard let bytes = reply.frames.first, let entry = MigrationEntry.decode(bytes) else {
            throw ServiceError(.unreadableEntry, "the staged entry is not one `recipes migrate` sends; migrate the export again")
        }
        let migrated: MigratedRecipe
        do {
            migrated = try MigrationReader.read(entry)
        } catch {
            throw error.serviceError
        }
        return try await turns.inTurn(migrated.id) { try await store(migrated) }
    }

    /// Stores a migrated recipe and its photos; used by the job runner, and by tests on their own.
    public func store(_ migrated: MigratedRecipe) async throws -> Outcome {
        // Every photo is made to fit before anything is stored: one that cannot be is left out, and said so.
        var fitted: [Data] = []
        var notes: [String] = []
        for photo in migrated.photos {
            do {
                fitted.append(try await photos.fit(photo.data, keepMetadata: false).bytes)
            } catch {
                notes.append("\(photo.name) was left out: \(error.message)")
            }
        }
        var draft = migrated.draft
        if let book = migrated.book {
            draft.bookID = try await storage.call(BookOps.Create.self, book).id
        }
        let created = try await storage.call(RecipeOps.Create.self, .init(id: migrated.id, recipe: draft, createdAt: migrated.createdAtForWire))
        var recipe = created.recipe
        // Photos go on a recipe made now, or one that so far holds only photos of this entry (a migration
        // stopped half way); photos a person took off a migrated recipe are not put back.
        let hashes = fitted.map(PhotoDesk.digest)
        var added = 0
        if created.created || Set(recipe.photos.map(\.sha256)).isSubset(of: Set(hashes)) {
            for (bytes, hash) in zip(fitted, hashes) where !recipe.photos.contains(where: { $0.sha256 == hash }) {
                guard recipe.photos.count < RecipeVault.maxPhotosPerRecipe else {
                    notes.append("the recipe already has \(RecipeVault.maxPhotosPerRecipe) photos, the most allowed")
                    break
                }
                do {
                    recipe.photos = try await storage.send(PhotoOps.Add.self, .init(recipeID: recipe.id), frames: [bytes]).body.photos
                    added += 1
                } catch let error as ServiceError {
                    notes.append("a photo was not kept: \(error.message)")
                }
            }
        }
        let outcome: ImportOutcome = created.created ? .created : added > 0 ? .updated : .unchanged
        return Outcome(outcome: outcome, recipe: recipe, photoNote: notes.isEmpty ? nil : notes.joined(separator: "; "))
    }
}

/// One piece of work at a time per recipe id; different ids go side by side.
actor RecipeTurns {
    private var busy: Set<UUID> = []
    private var waiting: [UUID: [CheckedContinuation<Void, Never>]] = [:]

    func inTurn<T: Sendable>(_ id: UUID, _ body: @Sendable () async throws -> T) async throws -> T {
        while busy.contains(id) {
            await withCheckedContinuation { waiting[id, default: []].append($0) }
        }
        busy.insert(id)
        defer {
            busy.remove(id)
            if var queue = waiting[id], !queue.isEmpty {
                queue.removeFirst().resume()
                waiting[id] = queue.isEmpty ? nil : queue
            }
        }
        return try await body()
    }
}
