import Foundation
import GRDB
import RecipeModel
import RecipeProtocol
#if canImport(Glibc)
import Glibc
#endif

extension RecipeStore {
    /// The reply for a request whose handler failed with `error`, in words the client can act on (nil when there are
    /// none better than the error's own): a disk the storage writes to is full, which SQLite, a photo's file
    /// and Foundation's file writes each say in their own way; the database locked by another program; every file
    /// the storage may open in use; the database file damaged; any other failure of SQLite's, without the statement
    /// it was running. A write that fails so keeps nothing: SQLite rolls
    /// its transaction back, and a photo's file is written aside and moved into place only once whole.
    public static func reply(for error: any Error, during op: String) -> ServiceError? {
        if isOutOfDescriptors(error) {
            // Passing: most of them are connections, and a closed connection gives its descriptor back. SQLite's own
            // words for it ("unable to open database file") would send a person looking for a missing database.
            return OpenFiles.allInUse("\(op) was not done", service: "recipe-storage", kept: "nothing of it was kept")
        }
        if isOutOfSpace(error) { return fullDisk(op) }
        if isLockedByAnotherProgram(error) {
            return ServiceError(.storageLocked, "\(op) was not done: \(lockedDatabase); nothing of it was kept. \(lockedAdvice), and try again")
        }
        guard let error = error as? DatabaseError else { return nil }
        if isDamage(error) {
            return ServiceError(.storageDamaged, "\(op) was not done: \(damagedDatabase(where: "this request")) (SQLite: \(error.message ?? "database disk image is malformed")); "
                + "nothing was changed. \(damagedAdvice)")
        }
        // Any other failure of SQLite's, in its own words and code: never the statement, which is the storage's
        // business and no help to the person who sent the request.
        let said = error.message.map { "\"\($0)\"" } ?? "nothing more"
        if error.resultCode.primaryResultCode == .SQLITE_IOERR {
            return ServiceError(.internalError, "\(op) was not done: the disk under recipe-storage's data folder failed a read or a write (SQLite said \(said), "
                + "code \(error.extendedResultCode.rawValue)); nothing of it was kept. The system's log (dmesg) says more about the disk")
        }
        return ServiceError(.internalError, "\(op) failed inside recipe-storage's database (SQLite said \(said), code \(error.extendedResultCode.rawValue))")
    }

    static func fullDisk(_ op: String) -> ServiceError {
        ServiceError(.storageFull,
            "\(op) was not done: the disk recipe-storage writes to is full (no space left on the device); nothing of it was kept. Free some space on the disk of the storage's data folder (or of the folder named in the request) and try again")
    }

    /// The damage said for `whoMet` ("this request", or the operation that met it).
    static func damagedDatabase(where whoMet: String) -> String {
        "\(RecipeVault.databaseFileName) in recipe-storage's data folder is damaged where \(whoMet) needed it"
    }
    static let damagedAdvice = "Stop recipe-storage and restore a backup into its data folder (README, \"Backups\"); with a replica that "
        + "holds the same recipes, start this one on an empty data folder instead and its next sync brings everything back"

    /// Whether SQLite found the database file damaged: a malformed page or index, or a file that is no longer a
    /// database at all (a header overwritten while it ran).
    static func isDamage(_ error: DatabaseError) -> Bool {
        [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode.primaryResultCode)
    }

    /// As `reply(for:during:)`, and a read or write that failed because the database file was removed or replaced
    /// under the running storage (SQLite's "unable to open database file" for a reader opening it) says so.
    public func reply(for error: any Error, during op: String) -> ServiceError? {
        if let moved = error as? DatabaseFileIdentity.Moved { return DatabaseFileIdentity.refusal(moved.problem, op: op) }
        if error is DatabaseError, let problem = batcher.files.problem() { return DatabaseFileIdentity.refusal(problem, op: op) }
        if Self.isOutOfSpace(error, on: folder) { return Self.fullDisk(op) }
        let reply = Self.reply(for: error, during: op)
        if reply?.code == .storageDamaged, let error = error as? DatabaseError {
            let seen = "\(Self.damagedDatabase(where: op)) (SQLite: "
                + "\(error.message ?? "database disk image is malformed"), at \(Date.now.formatted(.iso8601)))"
            damageSeen.withLock { if $0 == nil { $0 = seen } }
        }
        return reply
    }

    /// What is wrong with the database as the store has seen it: its files removed or replaced under it, damage a
    /// request met since it opened, or that it was opened for reading only; nil when none.
    public func databaseProblem() -> String? {
        if let problem = batcher.files.problem() { return problem }
        if let damage = damageSeen.withLock({ $0 }) { return "\(damage). \(Self.damagedAdvice)" }
        return readOnlyReason.map {
            "it runs read-only (\($0)): recipes can be read and backed up, nothing can be changed or synced. Free some space on the disk of its data folder: it starts again in full by itself"
        }
    }

    static let lockedDatabase = "another program holds \(RecipeVault.databaseFileName) locked for writing and did not let go within 5 seconds"
    static let lockedAdvice = "Close what holds it open with changes not yet written (an sqlite3 shell in a transaction, a database browser with unsaved edits, a tool copying or rewriting the file)"

    /// Whether `error` is SQLite's "database is locked": a write lock held by another connection for longer than the
    /// busy timeout. The storage's own connections take turns (one writer; readers never block it in WAL mode),
    /// so the holder is another program.
    static func isLockedByAnotherProgram(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return error.resultCode.primaryResultCode == .SQLITE_BUSY
    }

    /// Whether `error` came from the process (or the system) having no file descriptor left to give: said as such by
    /// a photo's file or Foundation, or as SQLite's "cannot open" while the process holds (nearly) every descriptor
    /// it may. SQLite does not say why it could not open a file, and a reader's connection opens three (the
    /// database, its log, the shared index): the one that failed may leave a descriptor or two free again.
    static func isOutOfDescriptors(_ error: any Error) -> Bool {
        if let error = error as? DatabaseError {
            return error.resultCode.primaryResultCode == .SQLITE_CANTOPEN && descriptorsNearlyUsedUp()
        }
        return errnoCodes(of: error).contains(where: OpenFiles.isExhaustion)
    }

    /// Whether the process holds all but a few of the descriptors its limit allows (Linux: counted in /proc/self/fd;
    /// the listing itself needs one, so a listing refused for want of one says so too).
    static func descriptorsNearlyUsedUp() -> Bool {
        guard let limit = OpenFiles.limit else { return false }
        guard let open = OpenFiles.openCount() else { return false }
        return UInt64(open) + 16 >= limit
    }

    /// The system error numbers `error` carries: a photo file's, a POSIX error's, or Foundation's (an NSError in the
    /// POSIX domain, or wrapping one).
    static func errnoCodes(of error: any Error) -> [Int32] {
        if let error = error as? PhotoStorageError { return error.errno.map { [$0] } ?? [] }
        if let error = error as? POSIXError { return [error.code.rawValue] }
        let bridged = error as NSError
        var codes: [Int32] = []
        if bridged.domain == NSPOSIXErrorDomain { codes.append(Int32(truncatingIfNeeded: bridged.code)) }
        if let underlying = bridged.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            codes.append(Int32(truncatingIfNeeded: underlying.code))
        }
        return codes
    }

    /// Whether `error` says that the disk of `folder` is full: as `isOutOfSpace(_:)` says, or an I/O error of SQLite's
    /// while that disk is known to have no room (`hasRoom`). SQLite says a full disk met while it sizes its shared-memory index (the
    /// `-shm` file beside the database, grown by 32 KB as the write-ahead log grows, and made at each open that finds
    /// none) as an I/O error (`SQLITE_IOERR_SHMSIZE`), not as `SQLITE_FULL`: a storage stopped cleanly on a disk that
    /// then filled to the last byte could not start at all.
    public static func isOutOfSpace(_ error: any Error, on folder: URL) -> Bool {
        if isOutOfSpace(error) { return true }
        guard let error = error as? DatabaseError, error.resultCode.primaryResultCode == .SQLITE_IOERR,
              let disk = diskSpace(of: folder) else { return false }
        return disk.free < room(onDiskOf: disk.size)
    }

    /// Whether the disk of `folder` has room for a storage to start in full: 16 MiB free, or 5% of a smaller disk.
    public static func hasRoom(_ folder: URL) -> Bool {
        guard let disk = diskSpace(of: folder) else { return false }
        return disk.free >= room(onDiskOf: disk.size)
    }

    private static func room(onDiskOf size: UInt64) -> UInt64 { min(16 << 20, size / 20) }

    /// The bytes free for the storage on the disk of `folder`, and the disk's size; nil when they cannot be told.
    public static func diskSpace(of folder: URL) -> (free: UInt64, size: UInt64)? {
        var disk = statvfs()
        guard statvfs(folder.path, &disk) == 0 else { return nil }
        return (UInt64(disk.f_bavail) * UInt64(disk.f_frsize), UInt64(disk.f_blocks) * UInt64(disk.f_frsize))
    }

    /// Whether `error` says that a disk is full, or a quota used up.
    public static func isOutOfSpace(_ error: any Error) -> Bool {
        let full: Set<Int32> = [ENOSPC, EDQUOT]
        if let error = error as? DatabaseError { return error.resultCode == .SQLITE_FULL }
        // Foundation's file writes also say it as a CocoaError of their own.
        let bridged = error as NSError
        if bridged.domain == NSCocoaErrorDomain && bridged.code == CocoaError.fileWriteOutOfSpace.rawValue { return true }
        return errnoCodes(of: error).contains(where: full.contains)
    }
}

/// The store could not be opened in its data folder, said as a person can act on it: what is wrong with the folder
/// and what to do, instead of SQLite's or Foundation's own words alone (which follow, for the record).
public struct DataFolderError: Error, CustomStringConvertible {
    public let folder: URL
    public let underlying: any Error

    public init(folder: URL, underlying: any Error) {
        self.folder = folder
        self.underlying = underlying
    }

    public var description: String {
        if underlying is UnfinishedBackup || underlying is DataFolderPathTooLong { return "cannot open the data folder \(folder.path): \(reason)" }
        return "cannot open the data folder \(folder.path): \(reason). (\(Self.plain(underlying)))"
    }

    /// Why, as far as the folder and the error tell.
    var reason: String {
        let manager = FileManager.default
        var isFolder: ObjCBool = false
        let choose = "choose another with --data or RECIPES_DATA"
        if underlying is UnfinishedBackup {
            return "it holds a backup that recipe-storage began and did not finish (\(RecipeVault.unfinishedBackupFileName) is still there; it was stopped while copying): the database may be empty or part-written and photos may be missing, so it is not a copy to restore from. Restore another backup, or \(choose)"
        }
        if let tooLong = underlying as? DataFolderPathTooLong {
            let resolved = tooLong.path == folder.standardizedFileURL.path ? "" : " (\(tooLong.path), its links followed)"
            return "its path\(resolved) is \(tooLong.path.utf8.count) bytes long, and SQLite opens the files recipe-storage keeps there only under a folder of at most \(RecipeStore.maxDataFolderBytes) bytes; \(choose), with a shorter path"
        }
        if manager.fileExists(atPath: folder.path, isDirectory: &isFolder), !isFolder.boolValue {
            return "it is a file, not a folder; \(choose)"
        }
        if RecipeStore.isOutOfSpace(underlying, on: folder) {
            return "its disk is full; free some space there and start recipe-storage again"
        }
        if RecipeStore.isLockedByAnotherProgram(underlying) {
            return "\(RecipeStore.lockedDatabase). \(RecipeStore.lockedAdvice), then start recipe-storage again"
        }
        // The nearest folder that exists: where recipe-storage must be able to write.
        var existing = folder
        while !manager.fileExists(atPath: existing.path), existing.path != "/" { existing = existing.deletingLastPathComponent() }
        var system = statvfs()
        if statvfs(existing.path, &system) == 0, system.f_flag & UInt(ST_RDONLY) != 0 {
            return "it is on a read-only file system (a volume mounted read-only?); recipe-storage keeps Recipes.sqlite and the photos there and must write them; mount it read-write or \(choose)"
        }
        if access(existing.path, W_OK) != 0 {
            return "recipe-storage (user id \(getuid())) may not write in \(existing.path); give it that folder (chown) or \(choose)"
        }
        if let error = underlying as? DatabaseError, RecipeStore.isDamage(error) {
            return "\(RecipeVault.databaseFileName) there is not a database recipe-storage can read (damaged, or another program's file); move it aside and restore a backup into the folder (README, \"Backups\"), or start with an empty folder"
        }
        return "recipe-storage could not open it; \(choose)"
    }

    private static func plain(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return "SQLite: \(error.message ?? "\(error.resultCode)")" }
        if let error = error as? PhotoStorageError { return error.description } // the folder's own files say their path and why
        return FileErrorText.reason(error)
    }
}

/// A data folder whose path is too long for SQLite to open every database recipe-storage keeps in it.
public struct DataFolderPathTooLong: Error {
    /// The folder's path, its links followed.
    public let path: String
}
