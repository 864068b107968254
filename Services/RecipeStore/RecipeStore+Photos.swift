import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

extension RecipeStore {
    /// Adds a photo to a recipe at `position` (the end when `nil`). The bytes are
    /// checked (size, real image), stored durably under their hash, and only then
    /// is the row committed. Adding bytes the recipe already has changes nothing.
    public func addPhoto(recipeID: UUID, bytes: Data, position: Int?) async throws -> [PhotoInfo] {
        let kind = try PhotoRules.check(bytes)
        let photos = self.photos
        return try await write { db in
            let recipe = try Self.fetchRecipe(recipeID, in: db)
            try Self.checkWritable(recipe)
            let sha256 = PhotoBlobs.hash(bytes)
            if recipe.photos.contains(where: { $0.sha256 == sha256 }) { return recipe.photos }
            guard recipe.photos.count < RecipeVault.maxPhotosPerRecipe else { throw PhotoRules.tooMany(recipe.photos.count) }
            let insertAt = position ?? recipe.photos.count
            guard (0...recipe.photos.count).contains(insertAt) else {
                throw ServiceError(.invalidArgument, "position is \(insertAt); with \(recipe.photos.count) photo\(recipe.photos.count == 1 ? "" : "s") it must be 0 to \(recipe.photos.count)")
            }
            try photos.store(bytes)
            var order = recipe.photos.map(\.id)
            let id = Self.photoID(recipeID: recipeID, sha256: sha256)
            order.insert(id, at: insertAt)
            try db.execute(sql: """
                INSERT INTO recipe_photos (id, recipeId, position, sha256, byteCount, mediaType) VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [id.databaseText, recipeID.databaseText, -1 - recipe.photos.count, sha256, bytes.count, kind.mediaType])
            try Self.renumber(order, recipeID: recipeID, in: db)
            return try Self.fetchRecipe(recipeID, in: db).photos
        }
    }

    /// The photos of a recipe, in order.
    public func photoList(recipeID: UUID) async throws -> [PhotoInfo] {
        try await recipe(recipeID).photos
    }

    /// A photo's record and its bytes (checked against the hash).
    public func photo(recipeID: UUID, position: Int) async throws -> (PhotoInfo, Data) {
        let list = try await photoList(recipeID: recipeID)
        guard list.indices.contains(position) else {
            throw ServiceError(.notFound, list.isEmpty ? "the recipe has no photos"
                : "the recipe has \(list.count) photos (positions 0 to \(list.count - 1)); there is none at \(position)")
        }
        return (list[position], try readBlob(list[position].sha256))
    }

    /// Moves a photo to `position`, shifting the others.
    public func movePhoto(recipeID: UUID, photoID: UUID, to position: Int) async throws -> [PhotoInfo] {
        try await write { db in
            let recipe = try Self.fetchRecipe(recipeID, in: db)
            try Self.checkWritable(recipe)
            var order = recipe.photos.map(\.id)
            guard let from = order.firstIndex(of: photoID) else {
                throw ServiceError(.notFound, "the recipe has no photo with id \(photoID.uuidString)")
            }
            guard order.indices.contains(position) else {
                throw ServiceError(.invalidArgument, "position is \(position); with \(order.count) photo\(order.count == 1 ? "" : "s") it must be 0 to \(order.count - 1)")
            }
            order.remove(at: from)
            order.insert(photoID, at: position)
            try Self.renumber(order, recipeID: recipeID, in: db)
            return try Self.fetchRecipe(recipeID, in: db).photos
        }
    }

    /// Removes a photo from a recipe; its file goes when no recipe uses it any more.
    public func removePhoto(recipeID: UUID, photoID: UUID) async throws -> [PhotoInfo] {
        let remaining = try await write { db in
            let recipe = try Self.fetchRecipe(recipeID, in: db)
            try Self.checkWritable(recipe)
            guard recipe.photos.contains(where: { $0.id == photoID }) else {
                throw ServiceError(.notFound, "the recipe has no photo with id \(photoID.uuidString)")
            }
            try db.execute(sql: "DELETE FROM recipe_photos WHERE id = ?", arguments: [photoID.databaseText])
            try Self.renumber(recipe.photos.map(\.id).filter { $0 != photoID }, recipeID: recipeID, in: db)
            return try Self.fetchRecipe(recipeID, in: db).photos
        }
        await collectUnusedPhotos()
        return remaining
    }

    /// A photo's id follows from its recipe and bytes, so the same photo added on two replicas is one photo.
    static func photoID(recipeID: UUID, sha256: String) -> UUID {
        DerivedID.uuid("photo|\(recipeID.uuidString)|\(sha256)")
    }

    /// Gives the photos positions 0… in `order` and bumps the recipe's version.
    private static func renumber(_ order: [UUID], recipeID: UUID, in db: Database) throws {
        // Two passes keep UNIQUE(recipeId, position) satisfied while positions shuffle.
        for (index, id) in order.enumerated() {
            try db.cachedStatement(sql: "UPDATE recipe_photos SET position = ? WHERE id = ?").execute(arguments: [-1_000 - index, id.databaseText])
        }
        for (index, id) in order.enumerated() {
            try db.cachedStatement(sql: "UPDATE recipe_photos SET position = ? WHERE id = ?").execute(arguments: [index, id.databaseText])
        }
        try db.execute(sql: "UPDATE recipes SET version = version + 1, updatedAt = ? WHERE id = ?",
                       arguments: [now(), recipeID.databaseText])
    }
}
