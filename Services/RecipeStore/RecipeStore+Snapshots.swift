import Crypto
import Foundation
import GRDB
import RecipeProtocol

/// Snapshots: a replica that holds nothing yet gets the whole of another as one consistent copy of its
/// database (SQLite's online backup), instead of every record applied one by one. The source writes the
/// copy into `snapshots/`; the receiving replica writes the bytes it is sent into `incoming/`, checks them,
/// makes the copy its own (its id, clocks and file stay its own; its cursor for the source starts where the
/// copy ends; the source's import jobs are left behind) and copies it over its empty database in one
/// transaction. What changed on the source meanwhile then comes through the change feed as usual.
extension RecipeStore {
    /// Snapshots a replica keeps at once, and how long one is kept unused.
    static let maxSnapshots = 4
    static let snapshotLifetime: TimeInterval = 3_600
    /// A snapshot neither read nor written for this long is taken as abandoned when the folder is full: the copy it
    /// was for failed without saying so (the worker was killed, a replica or the network went away meanwhile). A
    /// copy under way reads or writes its file every few milliseconds; one whose database file is across waits for
    /// its photos without touching it, but is given up only when four others came since.
    static let abandonedAfter: TimeInterval = 600
    /// The largest snapshot a replica takes (64 GiB).
    static let maxSnapshotBytes = 64 << 30
    /// The most one `sync.snapshotRead` returns.
    public static let maxSnapshotRead = 8 * 1_024 * 1_024

    var snapshotFolder: URL { folder.appendingPathComponent("snapshots", isDirectory: true) }
    var incomingFolder: URL { folder.appendingPathComponent("incoming", isDirectory: true) }

    // MARK: Making one

    /// Writes a consistent copy of the database to `snapshots/ID.sqlite` and describes it.
    public func makeSnapshot() async throws -> SyncOps.Snapshot.Response {
        let manager = FileManager.default
        try manager.createDirectory(at: snapshotFolder, withIntermediateDirectories: true)
        let kept = Self.makeRoom(in: snapshotFolder)
        guard kept < Self.maxSnapshots else {
            throw ServiceError(.busy, "\(kept) snapshots are being read already; try again when one is done (one unused for \(Int(Self.abandonedAfter / 60)) minutes makes way)")
        }
        let id = UUID()
        let path = snapshotFolder.appendingPathComponent("\(id.uuidString).sqlite").path
        do {
            let copy = try DatabaseQueue(path: path)
            try await copyDatabase(into: copy)
            // A single file, read by others without a write-ahead log beside it.
            try await copy.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = DELETE") }
            let (replica, seq, records, photos) = try await copy.read { db in
                (try SyncState.load(db).replica,
                 try Int.fetchOne(db, sql: "SELECT MAX(seq) FROM sync_records") ?? 0,
                 try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sync_records") ?? 0,
                 try Int.fetchOne(db, sql: "SELECT COUNT(DISTINCT sha256) FROM recipe_photos") ?? 0)
            }
            try copy.close()
            let (bytes, sha256) = try Self.digest(of: path)
            return .init(snapshot: id, replicaID: replica, seq: seq, bytes: bytes, sha256: sha256, records: records, photos: photos)
        } catch {
            try? manager.removeItem(atPath: path)
            throw error
        }
    }

    /// Up to `length` bytes of snapshot `id` from `offset`.
    public func readSnapshot(_ id: UUID, offset: Int, length: Int) throws -> Data {
        guard offset >= 0 else { throw ServiceError(.invalidArgument, "offset is \(offset); it must be 0 or more") }
        guard (1...Self.maxSnapshotRead).contains(length) else {
            throw ServiceError(.invalidArgument, "length is \(length); it must be 1 to \(Self.maxSnapshotRead)")
        }
        guard let handle = FileHandle(forReadingAtPath: snapshotPath(id)) else { throw Self.noSnapshot(id) }
        defer { try? handle.close() }
        Self.markUsed(handle)
        try handle.seek(toOffset: UInt64(offset))
        return try handle.read(upToCount: length) ?? Data()
    }

    /// The photo blobs snapshot `id`'s recipes use, in hash order after `after`.
    public func snapshotPhotos(_ id: UUID, after: String?, limit: Int) throws -> SyncOps.SnapshotPhotos.Response {
        guard (1...10_000).contains(limit) else { throw ServiceError(.invalidArgument, "limit is \(limit); it must be 1 to 10000") }
        let path = snapshotPath(id)
        guard let handle = FileHandle(forReadingAtPath: path) else { throw Self.noSnapshot(id) }
        Self.markUsed(handle)
        try? handle.close()
        var configuration = Configuration()
        configuration.readonly = true
        let copy = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? copy.close() }
        let hashes = try copy.read { db in
            try String.fetchAll(db, sql: "SELECT DISTINCT sha256 FROM recipe_photos WHERE sha256 > ? ORDER BY sha256 LIMIT ?",
                                arguments: [after ?? "", limit + 1])
        }
        return .init(sha256: Array(hashes.prefix(limit)), more: hashes.count > limit)
    }

    /// Removes snapshot `id`; `false` when it was gone.
    public func removeSnapshot(_ id: UUID) -> Bool {
        Self.removeDatabaseFile(snapshotPath(id))
    }

    func snapshotPath(_ id: UUID) -> String { snapshotFolder.appendingPathComponent("\(id.uuidString).sqlite").path }

    static func noSnapshot(_ id: UUID) -> ServiceError {
        ServiceError(.notFound, "no snapshot \(id.uuidString) here; snapshots are kept an hour: make a new one with sync.snapshot")
    }

    // MARK: Receiving one

    /// Whether nothing was ever stored here: no recipe, book, cook-log entry, ingredient, feed entry,
    /// held record or import job. Only such a replica takes a snapshot.
    static func holdsNothing(_ db: Database) throws -> Bool {
        let tables = ["sync_records", "sync_held", "recipes", "books", "cook_log", "ingredients", "import_jobs"]
        let sql = "SELECT " + tables.map { "NOT EXISTS (SELECT 1 FROM \($0))" }.joined(separator: " AND ")
        return try Bool.fetchOne(db, sql: sql) ?? false
    }

    /// Appends `bytes` at `offset` to the snapshot being received as `id`. Bytes sent again at an offset already
    /// written are taken as a retry. Returns the bytes received so far. `total` is the whole snapshot's size when
    /// the sender knows it: the write that brings the last byte starts the copy's check (see `IncomingSnapshots`).
    public func writeSnapshot(_ id: UUID, offset: Int, bytes: Data, total: Int? = nil) async throws -> Int {
        guard (0...Self.maxSnapshotBytes).contains(offset), bytes.count <= Self.maxSnapshotBytes - offset else {
            throw ServiceError(.invalidArgument, "offset is \(offset); a snapshot's bytes go at 0 to \(Self.maxSnapshotBytes) and end by there")
        }
        guard try await pool.read({ db in try Self.holdsNothing(db) }) else {
            throw ServiceError(.conflict, "this replica holds recipes already; a snapshot only goes to an empty one (its changes come through sync.apply)")
        }
        let manager = FileManager.default
        try manager.createDirectory(at: incomingFolder, withIntermediateDirectories: true)
        let path = incomingPath(id)
        if offset == 0 && !manager.fileExists(atPath: path) {
            let kept = Self.makeRoom(in: incomingFolder)
            incoming.forgetRemoved(in: incomingFolder)
            guard kept < Self.maxSnapshots else {
                throw ServiceError(.busy, "\(kept) snapshots are being received already; try again later (one not written to for \(Int(Self.abandonedAfter / 60)) minutes makes way)")
            }
            guard manager.createFile(atPath: path, contents: nil) else {
                throw ServiceError(.internalError, "could not create \(path)")
            }
        }
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw ServiceError(.invalidArgument, "snapshot \(id.uuidString) was not started here; send it from offset 0")
        }
        defer { try? handle.close() }
        let size = Int(try handle.seekToEnd())
        if offset + bytes.count <= size && offset < size { return size } // a retry of bytes already here
        guard offset == size else {
            throw ServiceError(.invalidArgument, "offset is \(offset), but \(size) bytes of snapshot \(id.uuidString) are here; send from \(size)")
        }
        do {
            try handle.write(contentsOf: bytes)
        } catch where Self.isOutOfSpace(error) {
            // A copy that no longer fits is removed whole: kept, it would hold the disk full (for up to an hour,
            // until it counts as stale) and the storage could write nothing else. A later sync sends it again.
            unlink(path) // the descriptor the deferred close lets go of is the file's last
            incoming.take(id)?.check.cancel()
            throw ServiceError(.storageFull,
                "snapshot \(id.uuidString) does not fit: the disk recipe-storage writes to is full after \(size) bytes of it; what was received of it is removed. Free some space on the disk of the storage's data folder and sync again")
        } catch {
            // Part of the bytes may be on disk: cut them off, so the sender's retry from `size` fits.
            try? handle.truncate(atOffset: UInt64(size))
            throw error
        }
        let received = size + bytes.count
        incoming.wrote(bytes, to: id, at: offset)
        if received == total, let sha256 = incoming.digest(of: id, bytes: received) {
            let schema = try await schemaFacts()
            incoming.startCheck(of: id, bytes: received, sha256: sha256) {
                await Self.check(snapshotAt: path, id: id, against: schema)
            }
        }
        return received
    }

    func incomingPath(_ id: UUID) -> String { incomingFolder.appendingPathComponent("\(id.uuidString).sqlite").path }

    /// Checks the received snapshot `id` and, if this replica is still empty and runs the same schema, makes
    /// it this replica's content. The incoming file is removed either way.
    public func installSnapshot(_ request: SyncOps.Install.Request) async throws -> SyncOps.Install.Response {
        let path = incomingPath(request.snapshot)
        let started = incoming.take(request.snapshot)
        guard FileManager.default.fileExists(atPath: path) else {
            throw ServiceError(.notFound, "no snapshot \(request.snapshot.uuidString) was received here; send it with sync.snapshotWrite first")
        }
        defer { Self.removeDatabaseFile(path) }
        // The check the last write started, if it did (its digest is of the bytes as they were written); else both now.
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
        let early = started.flatMap { $0.bytes == size ? $0 : nil }
        // A check still running must end before the file goes (its writable connection would make a new, empty one).
        if let started, early == nil { _ = await started.check.value }
        let (bytes, sha256) = try early.map { ($0.bytes, $0.sha256) } ?? Self.digest(of: path)
        guard bytes == request.bytes, sha256 == request.sha256.lowercased() else {
            if let early { _ = await early.check.value }
            throw ServiceError(.invalidArgument, "snapshot \(request.snapshot.uuidString) arrived as \(bytes) bytes with SHA-256 \(sha256), "
                               + "not the \(request.bytes) bytes with SHA-256 \(request.sha256.prefix(64)) that were sent; nothing was installed")
        }
        let checked: SnapshotCheck
        if let early {
            checked = await early.check.value
        } else {
            checked = await Self.check(snapshotAt: path, id: request.snapshot, against: try await schemaFacts())
        }
        let current = try await pool.read { db in try SyncState.load(db) }
        let refusal = { (reason: String) in
            SyncOps.Install.Response(installed: false, reason: reason, replicaID: current.replica, latestSeq: 0)
        }
        let copy: DatabaseQueue
        do {
            copy = try DatabaseQueue(path: path)
        } catch {
            throw Self.damagedSnapshot(request.snapshot, "is damaged or not a database this storage can open")
        }
        defer { try? copy.close() }
        // The verdict, in the order the checks would give it one after the other.
        if let refused = try checked.structure.get() { return refusal(refused) }
        try await copy.read { db in try Self.identityProblem(inSnapshot: db, request: request) }
        try checked.contents.get()
        try checked.feed.get()
        // Make the copy this replica's own before it goes in: its id, write count, clocks and file identity stay,
        // its cursor for the source starts where the copy ends, and the source's own jobs stay behind.
        let databasePath = folder.appendingPathComponent(RecipeVault.databaseFileName).path
        let file = SyncState.fileIdentity(databasePath)
        try await copy.write { db in
            let theirs = try SyncState.load(db)
            var mine = current
            if (theirs.wall, theirs.counter) > (mine.wall, mine.counter) { (mine.wall, mine.counter) = (theirs.wall, theirs.counter) }
            let history = try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'incarnations'").map { $0 + "\n" } ?? ""
            try db.execute(sql: "DELETE FROM sync_state WHERE key IN ('clockOffset', 'file', 'incarnations')")
            try db.execute(sql: "UPDATE sync_state SET value = ? WHERE key = 'replica'", arguments: [mine.replica])
            try mine.save(db)
            var extra: [(String, String)] = [("incarnations", history + "\(mine.replica) started from a snapshot of \(theirs.replica) "
                                                + "at its change \(request.seq), \(RecipeStore.now())")]
            if let file { extra.append(("file", file)) }
            if mine.offset != 0 { extra.append(("clockOffset", String(mine.offset))) }
            for (key, value) in extra {
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES (?, ?)").execute(arguments: [key, value])
            }
            try SyncState.begin(in: db) // the copy's is the source's
            try db.execute(sql: "DELETE FROM sync_cursors WHERE peer IN (?, ?)", arguments: [mine.replica, theirs.replica])
            // The source's own write stamps are not this replica's (`SyncSeen`); what the source held of this one's, it holds.
            try db.execute(sql: "DELETE FROM sync_own_writes")
            try db.execute(sql: "DELETE FROM sync_seen WHERE replica = ?", arguments: [mine.replica])
            try db.execute(sql: "INSERT INTO sync_cursors (peer, seq, syncedAt) VALUES (?, ?, ?)",
                           arguments: [theirs.replica, request.seq, Self.now()])
            try db.execute(sql: "DELETE FROM import_job_entries; DELETE FROM import_job_items; DELETE FROM import_jobs")
        }
        let installed = try await pool.barrierWriteWithoutTransaction { db -> Bool in
            guard try Self.holdsNothing(db) else { return false }
            try copy.read { source in try source.backup(to: db) }
            return true
        }
        guard installed else { return refusal("this replica is not empty any more") }
        ranking.forget()
        // The copy went into the write-ahead log whole (durably: the backup's commit synced it). It moves into the
        // file beside what comes next, and the log is cut back when SQLite starts it over (`logSizeLimit`).
        checkpointer.soon()
        pool.invalidateReadOnlyConnections()
        inPlaceReader.inDatabase { db in db.clearSchemaCache() }
        heldPhotos.withLock { held in
            for (hash, _) in held { held[hash] = Date() } // the blobs sent ahead are named now; keep them from the next collection
        }
        try findLostPhotos() // blobs the source could not send: the next sync with a replica that holds them brings them
        return .init(installed: true, replicaID: current.replica, latestSeq: request.seq)
    }

    // MARK: Helpers

    /// Every table, index, trigger and view, as SQLite keeps its definition (SQLite's own tables left out).
    static func schema(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: """
            SELECT type || ' ' || name || ' ' || tbl_name || ' ' || COALESCE(sql, '') FROM sqlite_master
            WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name
            """)
    }

    /// Brings the database file at `path`, made by an earlier release, to this release's schema, as a storage does at
    /// its first start on it (the file's own changes are not captured into its feed). Throws when it is not a database
    /// this can migrate. (A snapshot is only installed at the receiver's exact schema: a peer of an earlier release
    /// sends its records instead. The fuzz target `snapshot-install` keeps its seeds of earlier releases current so.)
    public static func upgradeDatabaseFile(at path: String) throws {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        try Migrations.migrator.migrate(queue)
    }

    /// Removes a database file and the journal, log and index SQLite may have left beside it; `false` when it was gone.
    @discardableResult
    public static func removeDatabaseFile(_ path: String) -> Bool {
        for suffix in ["-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        return (try? FileManager.default.removeItem(atPath: path)) != nil
    }

    /// A file's size and lowercase-hex SHA-256, read a megabyte at a time.
    static func digest(of path: String) throws -> (bytes: Int, sha256: String) {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw ServiceError(.internalError, "cannot read \(path)") }
        defer { try? handle.close() }
        var hasher = SHA256()
        var bytes = 0
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hasher.update(data: chunk)
            bytes += chunk.count
        }
        return (bytes, hasher.finalize().map { String(format: "%02x", $0) }.joined())
    }

    /// Makes way in `folder` for one more snapshot: removes what was untouched for a snapshot's lifetime and then,
    /// while `maxSnapshots` are still there, the one untouched longest if it is abandoned (`abandonedAfter`).
    /// Returns how many snapshots are left. Without it, copies that failed midway (each leaves its file) kept every
    /// later one out for an hour: a new replica answered busy to each snapshot sent to it and stayed empty.
    static func makeRoom(in folder: URL, now: Date = Date()) -> Int {
        removeStale(in: folder)
        let manager = FileManager.default
        var kept: [(path: String, used: Date)] = ((try? manager.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.hasSuffix(".sqlite") }
            .map { name in
                let path = folder.appendingPathComponent(name).path
                return (path, (try? manager.attributesOfItem(atPath: path))?[.modificationDate] as? Date ?? .distantPast)
            }
            .sorted { $0.used < $1.used }
        while kept.count >= maxSnapshots, let oldest = kept.first, now.timeIntervalSince(oldest.used) > abandonedAfter {
            removeDatabaseFile(oldest.path)
            kept.removeFirst()
        }
        return kept.count
    }

    /// Notes that a snapshot was just used (its file's modification time is what `makeRoom` and `removeStale` go by;
    /// a snapshot being read is not written).
    static func markUsed(_ handle: FileHandle) {
        _ = futimens(handle.fileDescriptor, nil)
    }

    /// At start: removes the snapshots made or being received that were abandoned (`abandonedAfter`): their copies
    /// ended before this start. A fresher one stays: the copy it is for goes on once its retry reaches the restarted storage.
    static func removeAbandonedTransfers(in folder: URL) {
        for name in ["snapshots", "incoming"] {
            removeStale(in: folder.appendingPathComponent(name, isDirectory: true), olderThan: abandonedAfter)
        }
    }

    /// Removes files in `folder` untouched for longer than `lifetime` (a snapshot's, unless told).
    static func removeStale(in folder: URL, olderThan lifetime: TimeInterval = snapshotLifetime) {
        let manager = FileManager.default
        let cutoff = Date().addingTimeInterval(-lifetime)
        for name in (try? manager.contentsOfDirectory(atPath: folder.path)) ?? [] {
            let path = folder.appendingPathComponent(name).path
            if let modified = (try? manager.attributesOfItem(atPath: path))?[.modificationDate] as? Date, modified < cutoff {
                try? manager.removeItem(atPath: path)
            }
        }
    }
}
