import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

extension RecipeStore {
    /// `url`'s path with the links of the part that exists followed (the rest, to be made, appended as written).
    static func resolvingLinks(_ url: URL) -> String {
        var existing = url
        var rest: [String] = []
        while !FileManager.default.fileExists(atPath: existing.path), existing.path != "/", !existing.path.isEmpty {
            rest.insert(existing.lastPathComponent, at: 0)
            existing = existing.deletingLastPathComponent()
        }
        return rest.reduce(existing.resolvingSymlinksInPath()) { $0.appendingPathComponent($1) }.path
    }

    /// Writes backups only inside `folder` (`recipe-storage --backup-folder`), made if missing: a client, whoever it
    /// is, can then neither write a copy of every recipe elsewhere on the storage's machine nor learn which folders
    /// exist there. A backup's folder may then be given by its name inside it. Throws, saying why, for a folder that
    /// is not absolute, cannot be made, or is the data folder or inside it.
    public func confineBackups(to folder: URL) throws {
        let path = folder.path
        guard path.hasPrefix("/"), !path.split(separator: "/").contains("..") else {
            throw ServiceError(.invalidArgument, "the backup folder \"\(path)\" must be an absolute path, without ..")
        }
        let standard = folder.standardizedFileURL
        let data = Self.resolvingLinks(self.folder.standardizedFileURL)
        let resolved = Self.resolvingLinks(standard)
        guard resolved != data, !resolved.hasPrefix(data + "/") else {
            throw ServiceError(.invalidArgument, "the backup folder \(standard.path) is the data folder or inside it; a backup there would be lost with the data it copies: choose a folder outside \(self.folder.path)")
        }
        do {
            try FileManager.default.createDirectory(at: standard, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw ServiceError(.invalidArgument, "the backup folder \(standard.path) cannot be made: \(FileErrorText.reason(error))")
        }
        backupFolder.withLock { $0 = URL(fileURLWithPath: resolved, isDirectory: true) }
    }

    /// Writes a consistent copy of the database (SQLite's online backup, taken while the storage
    /// runs) and of every photo blob it uses into `folder`, new or empty: an absolute path outside the data folder,
    /// and inside the backup folder when there is one (`confineBackups(to:)`), where a name alone names a folder too.
    /// A storage started on the copy takes a new incarnation, so restoring a replica from it converges
    /// with its peers (docs/SYNC.md, "Backups and restores").
    public func backup(to folder: String) async throws -> BackupOps.Backup.Response {
        let root = backupFolder.withLock { $0 }
        // Inside the backup folder, a name alone (or a path under it) names a folder there.
        let path = if let root, !folder.hasPrefix("/"), !folder.isEmpty { root.path + "/" + folder } else { folder }
        guard path.hasPrefix("/"), path.utf8.count <= 4_096, !path.split(separator: "/").contains("..") else {
            let shown = folder.isEmpty ? "folder is empty" : "folder \"\(folder.prefix(200))\""
            if let root {
                throw ServiceError(.invalidArgument, "\(shown): give the name of a new or empty folder inside the backup folder \(root.path), such as \"\(Self.exampleBackupName)\", or its absolute path there, without ..")
            }
            throw ServiceError(.invalidArgument, "\(shown): give an absolute path on the storage's machine, without .. (a name alone is read inside the backup folder of a storage started with --backup-folder; this one has none)")
        }
        let target = URL(fileURLWithPath: path, isDirectory: true).standardizedFileURL
        // Compared with links followed: a path through a link out of the backup folder, or into the data folder, is there.
        let resolved = Self.resolvingLinks(target)
        // Before anything is said of the folder itself: a client learns nothing of folders outside the backup folder.
        if let root, resolved == root.path {
            throw ServiceError(.invalidArgument, "folder \(target.path) is the backup folder itself; give a new folder inside it, such as \(root.appendingPathComponent(Self.exampleBackupName).path), or its name alone")
        }
        if let root, !resolved.hasPrefix(root.path + "/") {
            throw ServiceError(.invalidArgument, "folder \(target.path) is outside the backup folder \(root.path), the only place this storage writes backups (its --backup-folder); give a new folder inside it, such as \(root.appendingPathComponent(Self.exampleBackupName).path), or its name alone")
        }
        // SQLite opens no file whose path is longer than it allows (it follows links: the resolved path is what counts):
        // a folder past it was made, and then the copy failed.
        guard resolved.utf8.count <= Self.maxBackupFolderBytes else {
            let through = resolved == target.path ? "" : " (\(resolved.prefix(100))…, its links followed)"
            throw ServiceError(.invalidArgument, "folder \(target.path.prefix(100))…\(through) is \(resolved.utf8.count) bytes long; a backup's folder may be at most \(Self.maxBackupFolderBytes) bytes (the database copied into it needs a path SQLite can open): choose a shorter one")
        }
        // One at a time: each copies every photo on the thread the storage's other file work runs on, so backups
        // asked for again and again (a stranger's, a cron job overlapping itself) would hold it for their sum.
        let running = backupRunning.withLock { running -> String? in
            if let running { return running }
            running = target.path
            return nil
        }
        if let running {
            throw ServiceError(.busy, "a backup into \(running) is being written; the storage writes one backup at a time: retry when it ends")
        }
        defer { backupRunning.withLock { $0 = nil } }
        backupPhotosCopied.store(0, ordering: .relaxed)
        let manager = FileManager.default
        let existed = manager.fileExists(atPath: target.path)
        if existed {
            let contents = (try? manager.contentsOfDirectory(atPath: target.path)) ?? ["?"]
            if contents.contains(RecipeVault.unfinishedBackupFileName) {
                throw ServiceError(.invalidArgument,
                    "folder \(target.path) holds a backup that was not finished (\(RecipeVault.unfinishedBackupFileName) says so); remove the folder or choose another, so nothing is overwritten")
            }
            guard contents.isEmpty else {
                throw ServiceError(.invalidArgument, "folder \(target.path) is not empty; a backup goes into a new or empty folder, so nothing is overwritten")
            }
        }
        let data = Self.resolvingLinks(self.folder.standardizedFileURL)
        guard !resolved.hasPrefix(data + "/"), resolved != data else {
            throw ServiceError(.invalidArgument, "folder \(target.path) is inside the storage's data folder; choose a folder outside it")
        }
        // The outermost folder this backup makes: what a failed one removes, so it leaves no empty folders behind either.
        var outermostMade = target
        while !existed, outermostMade.path != "/", !manager.fileExists(atPath: outermostMade.deletingLastPathComponent().path) {
            outermostMade = outermostMade.deletingLastPathComponent()
        }
        do {
            // For this storage's user alone, as the data folder it copies.
            try manager.createDirectory(at: target, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            if !existed { try? manager.removeItem(at: outermostMade) }
            throw ServiceError(.invalidArgument, "cannot create \(target.path): \(FileErrorText.reason(error))")
        }
        // A backup that fails part way (a full disk, say) leaves nothing behind: a folder holding part of a copy
        // would look like a backup to restore from. One the storage cannot clean up after (kill -9, a power cut)
        // keeps the note it began with, and a storage refuses to start on it (`UnfinishedBackup`).
        do {
            try UnfinishedBackup.begin(in: target)
            // Blobs are not collected while the copy is taken (`backupRunning`): every photo the copied database names is still here.
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
            // Written in batches, each flushed to disk once for all its files (not two flushes per photo).
            var batch: [(sha256: String, bytes: Data)] = []
            var batchBytes = 0
            for hash in hashes {
                // Between two photos the storage's other file work has its turn (a photo added or read, a sync's):
                // a backup of thousands of photos does not hold it up for its length.
                await Task.yield()
                defer { backupPhotosCopied.add(1, ordering: .relaxed) }
                // Checked against its hash on the way. A blob lost here is left out, not fatal: the copy is still
                // worth having, and a storage started on it gets the blob back from a replica that holds it.
                let data: Data
                do {
                    data = try readBlob(hash)
                } catch let error as ServiceError where error.code == .notFound {
                    lost.append(hash)
                    continue
                }
                batch.append((hash, data))
                batchBytes += data.count
                bytes += data.count
                if batchBytes >= Self.backupBatchBytes {
                    _ = try blobs.storeAll(batch)
                    batch = []
                    batchBytes = 0
                }
            }
            _ = try blobs.storeAll(batch)
            try UnfinishedBackup.finish(in: target)
            return .init(folder: target.path, recipes: recipes, photos: hashes.count - lost.count, bytes: bytes,
                         lostPhotos: lost.isEmpty ? nil : lost)
        } catch {
            if existed {
                for name in (try? manager.contentsOfDirectory(atPath: target.path)) ?? [] {
                    try? manager.removeItem(at: target.appendingPathComponent(name))
                }
            } else {
                try? manager.removeItem(at: outermostMade)
            }
            throw error
        }
    }

    /// The longest path of a database file SQLite opens here, in bytes (its Unix file layer keeps a path's journal's name
    /// within 512 bytes), its links followed.
    static let maxDatabasePathBytes = 504
    /// The longest path of a backup's folder, in bytes: the database copied into it must open.
    static let maxBackupFolderBytes = maxDatabasePathBytes - "/\(RecipeVault.databaseFileName)".utf8.count
    /// The longest path of a data folder, in bytes: the longest database path in it, a snapshot's, must open.
    public static let maxDataFolderBytes = maxDatabasePathBytes - "/snapshots/\(UUID().uuidString).sqlite".utf8.count

    /// Photo bytes a backup holds in memory before writing them out together.
    static let backupBatchBytes = 32 << 20
    /// The name errors suggest for a backup's folder: today's date.
    static var exampleBackupName: String { String(ISO8601DateFormatter.string(from: Date(), timeZone: .gmt, formatOptions: [.withFullDate])) }
}

/// A folder that holds a backup `recipe-storage` began and did not finish: it was stopped (kill -9, a power cut)
/// while copying, so the database may be part-written (SQLite rolls that back to empty) or photos missing.
/// The note is on disk before anything of the copy, and goes only once all of the copy is.
public struct UnfinishedBackup: Error, CustomStringConvertible {
    public let folder: URL

    public var description: String {
        "\(folder.path) holds a backup that recipe-storage began and did not finish (\(RecipeVault.unfinishedBackupFileName) is still there): it is not a whole copy to restore from; restore another backup, or take a new one"
    }

    static let note = """
        recipe-storage began a backup in this folder and did not finish it (it was stopped, or the machine went \
        down, while copying). The database here may be empty or part-written and photos may be missing: this is not \
        a copy to restore from, and recipe-storage refuses to start on it. Take a new backup (recipes backup) into \
        another folder and remove this one.

        """

    /// Throws when `folder` holds the note of an unfinished backup.
    static func check(_ folder: URL) throws {
        if FileManager.default.fileExists(atPath: folder.appendingPathComponent(RecipeVault.unfinishedBackupFileName).path) {
            throw UnfinishedBackup(folder: folder)
        }
    }

    /// Puts the note in `folder`, on disk (and its name in the folder) before anything else is written there.
    static func begin(in folder: URL) throws {
        let path = folder.appendingPathComponent(RecipeVault.unfinishedBackupFileName).path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw PhotoStorageError.system("cannot write \(path)") }
        defer { close(descriptor) }
        let written = Array(note.utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == note.utf8.count, fsync(descriptor) == 0 else { throw PhotoStorageError.system("cannot write \(path)") }
        try PhotoBlobs.syncFolder(folder)
    }

    /// Flushes all the copy to disk, then removes the note: from then on the folder is a whole backup.
    static func finish(in folder: URL) throws {
        try PhotoBlobs.syncFileSystem(of: folder)
        guard unlink(folder.appendingPathComponent(RecipeVault.unfinishedBackupFileName).path) == 0 else {
            throw PhotoStorageError.system("cannot remove \(RecipeVault.unfinishedBackupFileName) from \(folder.path)")
        }
        try PhotoBlobs.syncFolder(folder)
    }
}
