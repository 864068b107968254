import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

/// Photo blobs lost from this replica's disk: a file removed, or bytes that no longer match their hash (moved
/// aside when read). Such a blob is never served; a recipe that names it keeps its photo row, and any sync with
/// a replica that holds the blob brings it back (`sync.info`'s `lostPhotos`, which the sync engine sends).
extension RecipeStore {
    /// At most this many lost blobs are named in one `sync.info` (the rest follow once those are back).
    static let lostPhotosPerInfo = 500

    /// Notes every blob a recipe names that is not in the photo folder (at start and after a snapshot install).
    func findLostPhotos() throws {
        // On the in-place connection: a synchronous wait for one of the pool's readers can deadlock the socket thread.
        let named = try readInPlace { db in try String.fetchAll(db, sql: "SELECT DISTINCT sha256 FROM recipe_photos") }
        let lost = named.filter { !photos.contains($0) }
        lostPhotos.withLock { $0 = Set(lost) }
    }

    /// The bytes of a blob a recipe here names. A blob lost from the disk is noted (a sync brings it back) and
    /// reported as `not_found`, never served damaged. A file that is there but that the system will not read for a
    /// reason that is not the photo's (a permission) is left where it is and reported with `unreadable` as the code.
    func readBlob(_ sha256: String, unreadable: ErrorCode = .internalError) throws -> Data {
        do {
            return try photos.read(sha256)
        } catch where error.lost {
            noteLost([sha256])
            throw ServiceError(.notFound, "\(error.description); this storage no longer holds it, and the next sync with a replica that does brings it back")
        } catch {
            guard case .unreadable(let reason) = error.kind, !Self.isOutOfDescriptors(error) else { throw error }
            throw ServiceError(unreadable, "photo \(sha256) is in recipe-storage's photo folder but cannot be read (\(reason)); "
                + "recipe-storage must be able to read every file of its data folder (recipes check lists the photo files it cannot read)")
        }
    }

    /// The blobs among `hashes` this replica holds (`photoBlobs`), for a sync reading them, and those it does not; a
    /// missing one a recipe here names is noted lost (a file removed by hand is otherwise found only at the next start
    /// or check), so this replica says so in `sync.info` and a sync with one that holds it brings it back.
    public func syncPhotoBlobs(_ hashes: [String], maxBytes: Int) async throws -> (blobs: [(sha256: String, bytes: Data)], missing: [String]) {
        let read = try photoBlobs(hashes, maxBytes: maxBytes)
        guard !read.missing.isEmpty else { return read }
        let missing = read.missing
        let named = try await pool.read { db in try missing.filter { try Self.recipesName(photo: $0, in: db) } }
        noteLost(named)
        return read
    }

    /// Notes blobs lost here (each named by a recipe here: the caller checked), for `sync.info` to name until a sync
    /// brings them back.
    func noteLost<Hashes: Sequence<String>>(_ hashes: Hashes) {
        lostPhotos.withLock { $0.formUnion(hashes) }
    }

    /// The lost blobs still missing that a recipe here still names, in hash order (at most `lostPhotosPerInfo`);
    /// those back in the folder (a sync or a new photo brought them) or named by no recipe any more are forgotten.
    func currentLostPhotos(in db: Database) throws -> [String] {
        let noted = lostPhotos.withLock { $0 }
        guard !noted.isEmpty else { return [] }
        var still: [String] = []
        for hash in noted.sorted() where !photos.contains(hash) {
            if try Self.recipesName(photo: hash, in: db) { still.append(hash) }
        }
        let kept = Set(still)
        // Those noted meanwhile (by another request) stay.
        lostPhotos.withLock { $0.subtract(noted.subtracting(kept)) }
        return Array(still.prefix(Self.lostPhotosPerInfo))
    }
}

extension RecipeStore {
    /// Whether a recipe here names the blob `hash` (its rows may stand while the blob is lost from the disk).
    static func recipesName(photo hash: String, in db: Database) throws -> Bool {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM recipe_photos WHERE sha256 = ? LIMIT 1"), arguments: [hash]) != nil
    }
}
