import Foundation
import GRDB
import RecipeProtocol

extension RecipeStore {
    /// Writes a consistent copy of the database (SQLite's online backup, taken while the storage
    /// runs) and of every photo blob it uses into `folder`, which must be absolute and empty or new.
    /// A storage started on the copy takes a new incarnation, so restoring a replica from it converges
    /// with its peers (docs/SYNC.md, "Backups and restores").
    public func backup(to folder: String) async throws -> BackupOps.Backup.Response {
        guard folder.hasPrefix("/"), folder.utf8.count <= 4_096, !folder.split(separator: "/").contains("..") else {
            throw ServiceError(.invalidArgument, "folder \"\(folder.prefix(200))\" must be an absolute path on the storage's machine, without ..")
        }
        let target = URL(fileURLWithPath: folder, isDirectory: true).standardizedFileURL
        let manager = FileManager.default
        let existed = manager.fileExists(atPath: target.path)
        if existed {
            let contents = (try? manager.contentsOfDirectory(atPath: target.path)) ?? ["?"]
            guard contents.isEmpty else {
                throw ServiceError(.invalidArgument, "folder \(target.path) is not empty; a backup goes into a new or empty folder, so nothing is overwritten")
            }
        }
        guard !target.path.hasPrefix(self.folder.standardizedFileURL.path + "/"), target.path != self.folder.standardizedFileURL.path else {
            throw ServiceError(.invalidArgument, "folder \(target.path) is inside the storage's data folder; choose a folder outside it")
        }
        do {
            try manager.createDirectory(at: target, withIntermediateDirectories: true)
        } catch {
            throw ServiceError(.invalidArgument, "cannot create \(target.path): \(error.localizedDescription)")
        }
        // A backup that fails part way (a full disk, say) leaves nothing behind: a folder holding part of a copy
        // would look like a backup to restore from.
        do {
            // Blobs are not collected while the copy is taken: every photo the copied database names is still here.
            backupsRunning.withLock { $0 += 1 }
            defer { backupsRunning.withLock { $0 -= 1 } }
            let databasePath = target.appendingPathComponent(RecipeVault.databaseFileName).path
            let copy = try DatabaseQueue(path: databasePath)
            try await copyDatabase(into: copy)
            let (hashes, recipes) = try await copy.write { db -> ([String], Int) in
                // A storage started on this copy is another incarnation of this replica, never this one.
                try db.execute(sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('file', ?)", arguments: [SyncState.backupMark])
                return (try String.fetchAll(db, sql: "SELECT DISTINCT sha256 FROM recipe_photos ORDER BY sha256"),
                        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM recipes") ?? 0)
            }
            try copy.close()
            let blobs = try PhotoBlobs(folder: target.appendingPathComponent(RecipeVault.photoFolderName))
            var bytes = (try? manager.attributesOfItem(atPath: databasePath)[.size] as? Int) ?? 0
            var lost: [String] = []
            for hash in hashes {
                // Checked against its hash on the way. A blob lost here is left out, not fatal: the copy is still
                // worth having, and a storage started on it gets the blob back from a replica that holds it.
                let data: Data
                do {
                    data = try readBlob(hash)
                } catch let error as ServiceError where error.code == .notFound {
                    lost.append(hash)
                    continue
                }
                _ = try blobs.store(data, checked: hash)
                bytes += data.count
            }
            return .init(folder: target.path, recipes: recipes, photos: hashes.count - lost.count, bytes: bytes,
                         lostPhotos: lost.isEmpty ? nil : lost)
        } catch {
            if existed {
                for name in (try? manager.contentsOfDirectory(atPath: target.path)) ?? [] {
                    try? manager.removeItem(at: target.appendingPathComponent(name))
                }
            } else {
                try? manager.removeItem(at: target)
            }
            throw error
        }
    }
}
