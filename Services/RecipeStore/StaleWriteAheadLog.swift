import Foundation
import GRDBSQLite
import RecipeModel

/// A write-ahead log left beside a database file that is not the one it was written for.
///
/// SQLite replays whatever `Recipes.sqlite-wal` holds onto `Recipes.sqlite` when it opens it: it cannot tell
/// that the file was replaced since. A storage stopped by kill -9 (or a crash) leaves its log; a backup's
/// contents copied over its data folder then get the old database's last pages written over the backup's, a
/// damaged file with rows of both. A backup says so in the file itself (its `sync_state` `file` entry is
/// `SyncState.backupMark` until a storage has started on it, and that start is checkpointed into the file
/// before anything else is written: see `RecipeStore.init`), so a log beside a file that still says so came
/// from the database the backup replaced. It is moved aside, never replayed. (A log beside a database file
/// that is gone is not replayed by SQLite: a new file starts a new log.)
enum StaleWriteAheadLog {
    /// What a set-aside log is renamed to, beside the database file.
    static let setAsideSuffix = "-wal.before-restore"

    struct CannotSetAside: Error, CustomStringConvertible {
        let log: String
        let underlying: any Error
        var description: String {
            "\(log) was left by a database this one replaced and must not be replayed onto it, but it could not be "
                + "moved aside (\(FileErrorText.reason(underlying))); remove it (and the -shm file beside it) and start again"
        }
    }

    /// Moves a log that does not belong to the file at `databasePath` aside; returns what was done, for the log.
    static func setAsideIfStale(databasePath: String) throws -> String? {
        let manager = FileManager.default
        let log = databasePath + "-wal"
        guard let size = (try? manager.attributesOfItem(atPath: log))?[.size] as? Int, size > 0 else { return nil }
        guard fileEntry(ofFileAlone: databasePath) == SyncState.backupMark else { return nil }
        let why = "the data folder holds a restored backup, and the write-ahead log beside it (\(size) bytes) was left by the database it replaced"
        let aside = databasePath + setAsideSuffix
        do {
            if manager.fileExists(atPath: aside) { try manager.removeItem(atPath: aside) }
            try manager.moveItem(atPath: log, toPath: aside)
        } catch {
            throw CannotSetAside(log: log, underlying: error)
        }
        // The shared-memory index describes the log that went; SQLite rebuilds it.
        try? manager.removeItem(atPath: databasePath + "-shm")
        return "\(why); it was moved to \(aside) instead of being replayed onto the database opened here"
    }

    /// The database file at `path` as SQLite opens the file alone: an `immutable` URI, read without the write-ahead
    /// log, its shared-memory index or any lock (the three characters URIs give a meaning escaped).
    static func fileAlone(_ path: String) -> String {
        var escaped = ""
        for character in path {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3F"
            case "#": escaped += "%23"
            default: escaped.append(character)
            }
        }
        return "file:\(escaped)?immutable=1"
    }

    /// Whether the write-ahead log beside the database at `path` holds no page: none there, or no more than its header
    /// (a storage stopped cleanly removes it; an open that could not go on leaves it empty).
    static func logHoldsNoPage(besideDatabase path: String) -> Bool {
        let log = path + "-wal"
        guard FileManager.default.fileExists(atPath: log) else { return true }
        guard let size = (try? FileManager.default.attributesOfItem(atPath: log))?[.size] as? Int else { return false }
        return size <= 32
    }

    /// The `sync_state` `file` entry as the database file says it without its write-ahead log (SQLite's
    /// `immutable` open reads the file alone); `nil` when the file has none or cannot be read that way.
    static func fileEntry(ofFileAlone path: String) -> String? {
        var connection: OpaquePointer?
        defer { sqlite3_close(connection) }
        guard sqlite3_open_v2(fileAlone(path), &connection, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nil) == SQLITE_OK
        else { return nil }
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        guard sqlite3_prepare_v2(connection, "SELECT value FROM sync_state WHERE key = 'file'", -1, &statement, nil) == SQLITE_OK,
              sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0)
        else { return nil }
        return String(cString: text)
    }
}
