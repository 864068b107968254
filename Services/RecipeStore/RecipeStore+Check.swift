import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

/// `storage.check` (`recipes check`): damage is otherwise found only when a request meets it — a page of the
/// database a request reads, a photo file someone asks for. A check reads it all on demand: before a backup, after
/// a disk scare, from a cron job.
extension RecipeStore {
    /// At most this many of SQLite's findings, and of missing or damaged photos, are reported.
    static let checkFindingsLimit = 100
    static let checkPhotosLimit = 1_000

    /// What a check reads: every photo file too, and SQLite's whole `integrity_check` rather than its `quick_check`.
    struct CheckScope: Hashable {
        let photos: Bool
        let full: Bool
    }

    /// Reads the database (SQLite's `quick_check`, or `integrity_check` when `full`) and, with `photos`, every
    /// photo file a recipe names against its SHA-256. A damaged photo file is moved aside as a read would move it,
    /// and every missing or damaged one is noted for the next sync to bring back; damage in the database is
    /// remembered for `storage.stats` (so `recipes status`).
    ///
    /// A check asked for while the same check runs joins it and gets its answer: each reads the whole database and
    /// every photo, so a client asking again and again (a cron job that overlaps itself, a stranger's connections
    /// asking eight times each) would otherwise have as many read everything at once, and two at once could tell
    /// one damaged photo two ways (the first moves it aside, the second finds it missing).
    public func check(photos checkPhotos: Bool, full: Bool) async throws -> StorageCheck {
        let scope = CheckScope(photos: checkPhotos, full: full)
        let running = checksRunning.withLock { running in
            if let check = running[scope] {
                checksJoined.add(1, ordering: .relaxed)
                return check
            }
            let check = Task { try await self.runCheck(photos: checkPhotos, full: full) }
            running[scope] = check
            return check
        }
        defer { checksRunning.withLock { if $0[scope] == running { $0[scope] = nil } } }
        return try await running.value
    }

    private func runCheck(photos checkPhotos: Bool, full: Bool) async throws -> StorageCheck {
        checksRun.add(1, ordering: .relaxed)
        if let hold = beforeCheckReads.withLock({ $0 }) { await hold() }
        let pragma = full ? "integrity_check" : "quick_check"
        var findings: [String]
        do {
            findings = try await pool.read { db in
                try String.fetchAll(db, sql: "PRAGMA \(pragma)(\(Self.checkFindingsLimit))")
            }
        } catch let error as DatabaseError where Self.isDamage(error) {
            findings = ["SQLite: \(error.message ?? "database disk image is malformed")"]
        }
        var hashes: [String]?
        if checkPhotos {
            do {
                hashes = try await pool.read { db in try String.fetchAll(db, sql: "SELECT DISTINCT sha256 FROM recipe_photos ORDER BY sha256") }
            } catch let error as DatabaseError where Self.isDamage(error) {
                if findings == ["ok"] { findings = [] }
                findings.append("the list of photos could not be read (SQLite: \(error.message ?? "database disk image is malformed")), so no photo file was checked")
            }
        }
        var missing: [String] = [], damaged: [String] = [], unreadable: [StorageCheck.UnreadablePhoto] = []
        for hash in hashes ?? [] {
            // Each photo is read on the thread the storage's other file work runs on: between two, that work has
            // its turn, so a check of thousands of photos does not hold up a photo add or get for its length.
            await Task.yield()
            do {
                _ = try self.photos.read(hash)
            } catch {
                switch error.kind {
                case .missing: missing.append(hash)
                case .damaged: damaged.append(hash) // and moved aside just now
                case .unreadable(let reason):
                    // There, but the system would not give its bytes for a reason that is not the photo's (a permission,
                    // no files left): the check says it and goes on to the next photo.
                    unreadable.append(.init(sha256: hash, reason: reason))
                case .failed: unreadable.append(.init(sha256: String(hash.prefix(80)), reason: error.description))
                }
            }
        }
        noteLost(missing + damaged)
        if findings != ["ok"] {
            let seen = "\(Self.damagedDatabase(where: StorageOps.Check.name)) (SQLite: \(findings[0]), at \(Date.now.formatted(.iso8601)))"
            damageSeen.withLock { if $0 == nil { $0 = seen } }
        }
        let problem = batcher.files.problem()
        var advice: [String] = []
        if problem != nil {
            advice.append("Stop recipe-storage, put its data folder back as it was (or restore a backup into it) and start it again")
        } else if findings != ["ok"] {
            advice.append(Self.damagedAdvice)
        }
        if !unreadable.isEmpty {
            advice.append("Photo files that are there but cannot be read were left as they are: mend what the system says of them "
                + "(most often a file's owner or permissions in the photo folder, which recipe-storage must be able to read), then check again")
        }
        if !missing.isEmpty || !damaged.isEmpty {
            advice.append("The photos are noted as lost: the next sync with a replica that holds them brings them back (recipes sync); "
                + "without a replica, restore a backup")
        }
        return StorageCheck(database: findings, databaseCheck: pragma, photosChecked: hashes?.count,
                            missingPhotos: Array(missing.prefix(Self.checkPhotosLimit)), damagedPhotos: Array(damaged.prefix(Self.checkPhotosLimit)),
                            unreadablePhotos: unreadable.isEmpty ? nil : Array(unreadable.prefix(Self.checkPhotosLimit)),
                            problem: problem, advice: advice.isEmpty ? nil : advice.joined(separator: ". "))
    }
}
