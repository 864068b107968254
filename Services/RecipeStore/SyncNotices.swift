import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// What a replica records in its history while it runs and an operator should hear of at once: its clock restarted
/// (it had run ahead of the machine's), or it took a new incarnation (a peer showed it was restored from an older
/// copy). At open the store says so through `clockNote` and `incarnationNote`; after that, through the sink the
/// service gives `RecipeStore.onSyncNotice`, called once the write that recorded it is committed (never for one
/// rolled back).
enum SyncNotices {
    /// What happened.
    enum Kind: String, Sendable {
        case clockRestart = "clockRestarts"
        case newIncarnation = "incarnations"
    }

    typealias Sink = @Sendable (Kind, String) -> Void

    /// Sinks by database file, as SQLite names it.
    private static let sinks = Mutex<[String: Sink]>([:])

    static func setSink(_ sink: Sink?, forDatabaseAt path: String) {
        sinks.withLock { $0[path] = sink }
    }

    /// The file `db` writes, as SQLite names it (the key of its sink).
    static func databasePath(_ db: Database) -> String {
        sqlite3_db_filename(db.sqliteConnection, "main").map { String(cString: $0) } ?? ""
    }

    /// Tells the sink of `db`'s file of `line` once the transaction it was written in commits.
    static func post(_ kind: Kind, _ line: String, in db: Database) {
        let path = databasePath(db)
        guard let sink = sinks.withLock({ $0[path] }) else { return }
        if db.isInsideTransaction {
            db.afterNextTransaction { _ in sink(kind, line) }
        } else {
            sink(kind, line)
        }
    }
}

extension RecipeStore {
    /// Calls `sink` for each clock restart and new incarnation from now on, once its write is committed (nil: no
    /// more). Those at open are `clockNote` and `incarnationNote`.
    public func onSyncNotice(_ sink: (@Sendable (_ what: String, _ why: String) -> Void)?) {
        let path = sqlitePath
        guard let sink else { return SyncNotices.setSink(nil, forDatabaseAt: path) }
        SyncNotices.setSink({ kind, line in
            sink(kind == .clockRestart ? "replica clock restarted" : "new replica incarnation", line)
        }, forDatabaseAt: path)
    }
}
