import Foundation
import GRDB
import RecipeModel
import RecipeProtocol
import Synchronization

/// The recipe database and photo blobs of one storage service: `Recipes.sqlite`
/// and the `photos/` folder in a data folder. Every read and write goes through
/// its intent-named methods; GRDB stays inside this module.
public final class RecipeStore: Sendable {
    let pool: DatabasePool
    /// The database file as SQLite names it: the key of this store's sync notices (`onSyncNotice`).
    let sqlitePath: String
    /// The read-only connection `readInPlace` uses, apart from the pool's readers (see there).
    let inPlaceReader: DatabaseQueue
    /// Commits concurrent writes together (see `write`).
    let batcher: WriteBatcher
    /// Moves the write-ahead log into the database file beside the writer, not inside its commits.
    let checkpointer: Checkpointer
    /// The note beside the database of its last write and of when the storage last changed its file.
    let writeMark: WriteMark?
    /// What search ranking reads for every match, kept between searches while the index is unchanged.
    let ranking = SearchRanking()
    /// The data folder.
    public let folder: URL
    let photos: PhotoBlobs
    /// Blobs another replica sent ahead of the records that use them: kept from collection for an hour.
    let heldPhotos = Mutex<[String: Date]>([:])
    /// Blobs a recipe here names that are gone from the photo folder (or were damaged and moved aside); a sync
    /// brings them back from a replica that holds them. See `RecipeStore+LostPhotos.swift`.
    let lostPhotos = Mutex<Set<String>>([])
    /// Snapshots being received: the running digest of each, and the check its last write started.
    let incoming = IncomingSnapshots()
    /// The first damage a request met since the store opened (what and when), for `stats` and so `recipes status`:
    /// a damaged page stays damaged until a backup is restored.
    let damageSeen = Mutex<String?>(nil)
    /// The folder of the backup being written, one at a time: photo collection waits, so a copied database never
    /// names a collected blob.
    let backupRunning = Mutex<String?>(nil)
    /// The photos the backup being written has copied so far.
    let backupPhotosCopied = Atomic<Int>(0)
    /// The only folder backups are written into (`--backup-folder`), its links followed; nil: any folder outside the
    /// data folder. See `confineBackups(to:)`.
    let backupFolder = Mutex<URL?>(nil)
    /// Checks running, by what they read: one asked for while the same check runs joins it (`check`).
    let checksRunning = Mutex<[CheckScope: Task<StorageCheck, any Error>]>([:])
    /// How many checks ran since the store opened, and how many requests joined one running.
    let checksRun = Atomic<Int>(0)
    let checksJoined = Atomic<Int>(0)
    /// Awaited before a check reads anything (tests hold a check open with it; nil otherwise).
    let beforeCheckReads = Mutex<(@Sendable () async -> Void)?>(nil)
    /// How much processor time a read whose cost the client's text decides (a search, can-make) may use; see `QueryTimeLimit`.
    let clientReadLimit = Mutex<Duration>(RecipeStore.defaultClientReadLimit)
    /// 1.5 s: under the command line's wait for one try (2 s) when the machine is not busy; some 60 times a search
    /// for the two most common words of 30,000 recipes, and five times a can-make over them (0.26 s).
    public static let defaultClientReadLimit = Duration.milliseconds(1_500)
    /// Set when this open started a new incarnation (the file was restored or copied): for the service's log.
    public let incarnationNote: String?
    /// Why this replica's clock restarted at open (it had run ahead of the machine's), or nil.
    public let clockNote: String?
    /// Set when this open moved aside a write-ahead log that belonged to the database a restored backup
    /// replaced (see `StaleWriteAheadLog`): for the service's log.
    public let setAsideLogNote: String?
    /// Why the store was opened for reading only (`init(readingOnly:because:)`), or nil: it takes no write.
    public let readOnlyReason: String?
    /// Opened for reading only as the database file alone (`immutable`: no log, no index, no lock), because SQLite could
    /// not make its index on a full disk. Nothing may write the file while it is open so: a read meanwhile could meet
    /// pages of two versions (see `RoomWatch`, whose trial open in full writes it).
    public let readsFileAlone: Bool

    /// A read of one record's rows (a few index lookups, tens of microseconds) done on the calling
    /// thread. An asynchronous read hands the work to a reader's queue and the result back, two thread
    /// wake-ups that cost ten times the read itself on a small machine (storage-bench: `recipe.get`
    /// 635 µs p50 with them). Only for reads bounded by one record: searches, lists and exports take
    /// `pool.read` asynchronously, so they never hold up the thread that called them.
    ///
    /// It reads on a connection of its own (`inPlaceReader`), never one of the pool's. The service calls it on
    /// its socket thread, and an asynchronous read hands its pool reader back when its request resumes, which is
    /// on that same thread: waiting there for a pool reader while five slow reads held them all was a deadlock
    /// that stopped the storage for good. This connection is only ever held by a read like this one, which
    /// never waits for anything, so the socket thread waits at most for another record's read.
    func readInPlace<T>(_ work: (Database) throws -> T) throws -> T {
        try inPlaceReader.read(work)
    }

    /// Copies the whole database into `copy` (SQLite's online backup, on one pool reader for the length of the copy).
    ///
    /// GRDB's backup waits for a pool reader synchronously. It must not wait on a thread that requests run on: a
    /// reader taken by an asynchronous read is handed back when that read's request resumes, which is a job on the
    /// request's thread, so five such reads and a backup there would wait for each other for good (the deadlock of
    /// `readInPlace`, by another door). So the copy waits on a thread of its own and the caller only awaits it.
    func copyDatabase(into copy: DatabaseQueue) async throws {
        let pool = self.pool
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let thread = Thread { continuation.resume(with: Result { try pool.backup(to: copy) }) }
            thread.name = "database copy"
            thread.start()
        }
    }

    /// Reads with `work` on a pool reader within the client-read limit; a read stopped there throws the error
    /// `stopped` makes of the limit's text ("1.5 s"), which tells the client why and what to ask instead.
    func readWithinClientLimit<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T,
                                            stopped: (_ limit: String) -> ServiceError) async throws -> T {
        let limit = clientReadLimit.withLock { $0 }
        do {
            return try await pool.read { db in try QueryTimeLimit.run(limit, on: db) { try work(db) } }
        } catch let exceeded as QueryTimeLimit.Exceeded {
            throw stopped(exceeded.limit.spokenText)
        }
    }

    /// Sets how long a read whose cost the client's text decides may run (tests make it short).
    public func limitClientReads(to limit: Duration) {
        clientReadLimit.withLock { $0 = limit }
    }

    /// The writing connection's page cache, in KiB (pages are allocated as they are used).
    static let writerCacheKiB = 32 * 1024
    /// The size the write-ahead log file is cut back to when SQLite starts it over (`journal_size_limit`).
    static let logSizeLimit = 64 << 20

    /// Opens (creating if needed) the store in `folder` and brings its schema up to date.
    public init(folder: URL) throws {
        self.folder = folder
        // SQLite opens no database under a longer path: the store would open, and its snapshots would not.
        let resolved = Self.resolvingLinks(folder.standardizedFileURL)
        guard resolved.utf8.count <= Self.maxDataFolderBytes else { throw DataFolderPathTooLong(path: resolved) }
        // Never a half-copied backup: SQLite would roll its database back to empty and start on that.
        try UnfinishedBackup.check(folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        Self.removeAbandonedTransfers(in: folder)
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(5)
        configuration.label = "Recipes"
        configuration.prepareDatabase { db in try SearchRanking.register(on: db) }
        let path = folder.appendingPathComponent(RecipeVault.databaseFileName).path
        // The file's time as it was found, before this start's own writes move it (`WriteMark`).
        let fileTimeFound = WriteMark.fileTime(path)
        setAsideLogNote = try StaleWriteAheadLog.setAsideIfStale(databasePath: path)
        pool = try DatabasePool(path: path, configuration: configuration)
        // GRDB turns WAL on and then sets synchronous=NORMAL on the writer; an
        // acknowledged write must survive power loss, so FULL it is.
        sqlitePath = try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            return SyncNotices.databasePath(db)
        }
        // The database and its log are open from here on: the writer checks they stay the files at these paths.
        batcher = WriteBatcher(pool: pool, files: DatabaseFileIdentity(path: path))
        // A write inside a savepoint (each of a group commit's writes has one) journals the pages it changes;
        // in memory that is a copy, on disk (SQLite's default past 64 KB) a temporary file written and
        // read back for every create. The writer's page cache holds the index pages a create touches
        // (2 MB by default; a create at 100k recipes read ~150 pages from the file without it).
        // A log that grew large (a snapshot installed goes into it whole) is cut back to 64 MiB when SQLite
        // starts it over, instead of keeping its largest size on the disk for good.
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
            try db.execute(sql: "PRAGMA cache_size = -\(Self.writerCacheKiB)")
            try db.execute(sql: "PRAGMA journal_size_limit = \(Self.logSizeLimit)")
        }
        try Migrations.migrator.migrate(pool)
        // One write at start: changes an older version left unrecorded, a catalogue it placed by the order its records
        // came in, a new incarnation if the file was copied, then a clock left ahead restarted; this start's number first
        // (`SyncState.start`).
        (incarnationNote, clockNote) = try pool.write { db in
            try SyncState.begin(in: db)
            try SyncLog.capture(in: db)
            try SyncLog.settleCatalogueOnce(in: db)
            return (try SyncState.checkIncarnation(db, path: path, fileTime: fileTimeFound), try SyncLog.restartClockIfAhead(in: db))
        }
        if incarnationNote != nil {
            // The file itself must stop saying it is a backup before anything else is written: a log found beside a
            // file that says so is set aside at the next start (a kill -9 from here on must not lose writes that way).
            let result = try pool.writeWithoutTransaction { db in try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            if let result, result[0] as Int? != 0 {
                throw ServiceError(.internalError,
                    "\(path) could not be checkpointed after taking a new incarnation (another process holds it open); stop it and start again")
            }
        }
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA optimize=0x10002") }
        // From here on every commit that moves this replica's write number notes it beside the database.
        let mark = WriteMark(databasePath: path)
        if let mark {
            try pool.writeWithoutTransaction { db in
                try mark.note(db)
                db.add(transactionObserver: mark, extent: .databaseLifetime)
            }
        }
        writeMark = mark
        var inPlace = Configuration()
        inPlace.readonly = true
        inPlace.busyMode = .timeout(5)
        inPlace.label = "Recipes in place"
        inPlaceReader = try DatabaseQueue(path: path, configuration: inPlace)
        let checkpointer = Checkpointer(databasePath: path, mark: mark)
        pool.writeWithoutTransaction { db in checkpointer.install(on: db) }
        self.checkpointer = checkpointer
        // Whatever the open wrote into the file so far (SQLite's own checkpoints during a migration, the one after a
        // new incarnation) is the storage's: the mark holds the file's time from here on.
        mark?.refresh()
        photos = try PhotoBlobs(folder: folder.appendingPathComponent(RecipeVault.photoFolderName))
        readOnlyReason = nil
        readsFileAlone = false
        try findLostPhotos()
    }

    /// Opens the store in `folder` for reading only, when a full open could not be made (`reason` says why, for
    /// people: the disk is full, and the open's own writes — the checks of a restored file, the clock, the note beside
    /// the database — found no room). Nothing is written, not even what a full open settles: every request that
    /// would write must be refused before it reaches the store (the service refuses them, and every sync: without the
    /// open's checks of a restored or copied file, this replica's feed is not offered to its peers). Throws when the
    /// file's schema is not this release's (an older file needs its migrations written first) or it cannot be read.
    public init(readingOnly folder: URL, because reason: String) throws {
        self.folder = folder
        let resolved = Self.resolvingLinks(folder.standardizedFileURL)
        guard resolved.utf8.count <= Self.maxDataFolderBytes else { throw DataFolderPathTooLong(path: resolved) }
        try UnfinishedBackup.check(folder)
        var configuration = Configuration()
        configuration.readonly = true
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(5)
        configuration.label = "Recipes (read only)"
        configuration.prepareDatabase { db in try SearchRanking.register(on: db) }
        let path = folder.appendingPathComponent(RecipeVault.databaseFileName).path
        func open(_ opened: String) throws -> (DatabasePool, String, Bool) {
            let pool = try DatabasePool(path: opened, configuration: configuration)
            let (sqliteName, migrated) = try pool.read { db in
                (SyncNotices.databasePath(db), try Migrations.migrator.hasCompletedMigrations(db))
            }
            return (pool, sqliteName, migrated)
        }
        // Even to read, SQLite makes the shared-memory index beside the database (32 KB): on a disk full to the last
        // byte it cannot. When the write-ahead log holds no page — a storage stopped cleanly removes it — the file
        // alone holds every write, and is read as such (`immutable`: no log, no index, no lock). Nothing writes it
        // meanwhile: the data folder's lock keeps other storages out, and this one refuses every write.
        var opened = path
        let (pool, sqliteName, migrated): (DatabasePool, String, Bool)
        do {
            (pool, sqliteName, migrated) = try open(path)
        } catch let error as DatabaseError where error.resultCode.primaryResultCode == .SQLITE_IOERR
                    && StaleWriteAheadLog.logHoldsNoPage(besideDatabase: path) {
            opened = StaleWriteAheadLog.fileAlone(path)
            (pool, sqliteName, migrated) = try open(opened)
        }
        self.pool = pool
        guard migrated else { throw ReadOnlyOpenRefused(reason: "its database is of an older release, whose changes must be written first") }
        sqlitePath = sqliteName
        batcher = WriteBatcher(pool: pool, files: DatabaseFileIdentity(path: path))
        var inPlace = Configuration()
        inPlace.readonly = true
        inPlace.busyMode = .timeout(5)
        inPlace.label = "Recipes in place"
        inPlaceReader = try DatabaseQueue(path: opened, configuration: inPlace)
        checkpointer = Checkpointer(databasePath: path) // never installed: nothing is written to move
        writeMark = nil
        (incarnationNote, clockNote, setAsideLogNote) = (nil, nil, nil)
        // The folder is there (the full open made it); its leftovers are not cleared: that is the full open's work.
        photos = PhotoBlobs(existing: folder.appendingPathComponent(RecipeVault.photoFolderName))
        readOnlyReason = reason
        readsFileAlone = opened != path
        try findLostPhotos()
    }

    /// The durability settings in force on the writing connection: `journal_mode` and `synchronous` (2 = FULL).
    public func durabilitySettings() throws -> (journalMode: String, synchronous: Int) {
        try pool.writeWithoutTransaction { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "", try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1)
        }
    }

    /// `ok` when SQLite finds the file sound.
    public func integrityCheck() throws -> String {
        try pool.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ") }
    }

    /// The names of the migrations applied to the file, oldest first.
    public func appliedMigrations() throws -> [String] {
        try pool.read { db in try Migrations.migrator.appliedMigrations(db) }
    }

    /// Closes the database (letting SQLite refresh its query-planner statistics first); later calls fail.
    public func close() throws {
        onSyncNotice(nil)
        if readOnlyReason != nil {
            // Nothing was written: nothing to refresh, copy or note.
            try inPlaceReader.close()
            try pool.close()
            return
        }
        try? pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA optimize") }
        checkpointer.stop()
        ReadBack.forget() // its connection's address may be another store's next
        try inPlaceReader.close()
        // The close copies the log into the file: the mark says so while it does, and holds the file's time after.
        let close = {
            try self.pool.close()
            self.checkpointer.released()
            Checkpointer.finish(databasePath: self.folder.appendingPathComponent(RecipeVault.databaseFileName).path)
        }
        if let writeMark { try writeMark.copying(close) } else { try close() }
    }
}

/// Ids are stored as their canonical uppercase text.
extension UUID {
    var databaseText: String { uuidString }
}

extension Row {
    func uuid(_ column: String) -> UUID? {
        (self[column] as String?).flatMap(UUIDText.uuid)
    }
}

extension RecipeStore {
    /// How many recipes are stored.
    public func recipeCount() async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM recipes") ?? 0 }
    }
}

/// A store that could not be opened even for reading only (`RecipeStore.init(readingOnly:because:)`).
public struct ReadOnlyOpenRefused: Error, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}
