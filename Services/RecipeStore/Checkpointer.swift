import Dispatch
import GRDB
import GRDBSQLite
import Synchronization

/// Copies the write-ahead log's pages into the database file on a queue of its own, beside the writer.
///
/// SQLite's automatic checkpoint runs inside the commit that takes the log past 1,000 pages: that commit's
/// writer copies the pages and syncs the file while every other write waits for it (storage-bench: about a
/// sixteenth of the writer's time at 8 clients creating, and most of a create's 99th percentile). Here the
/// writer's commit only notes the log's size (SQLite's log hook, which replaces the automatic checkpoint), and a
/// passive checkpoint runs on this queue's own connection, on the other core: it never waits for readers or the
/// writer. SQLite starts the log over at the next write once every page is in the file; under writes that never
/// pause that takes the writer itself (`writerLimit`), which then copies only what is left.
///
/// A checkpoint that could not reach the log's end (a reader still needs older pages: an export, a backup, a
/// snapshot being made) tries again a little later by itself, so the last writes before a quiet spell reach the file
/// without waiting for the next write.
final class Checkpointer: Sendable {
    /// The log size, in pages, from which a checkpoint runs (SQLite's own default).
    static let threshold: Int32 = 1_000
    /// The log size, in pages, from which the writer checkpoints the rest inside its commit after all.
    static let writerLimit: Int32 = 4_000

    private struct State {
        var requested = false
        var stopped = false
        /// The log hook holds a reference (from `install` until `released`).
        var hookHolds = false
        /// A retry of a checkpoint that did not reach the log's end is waiting on the queue.
        var retryWaiting = false
        /// Checkpoints in a row since the last request that did not reach the log's end.
        var short = 0
    }

    /// How many checkpoints in a row that did not reach the log's end are tried again by themselves after a request
    /// (about half a minute of retries; past that, the next request starts them again).
    static let retries = 20

    /// The checkpoint's own connection: opened, used and closed on `queue` only.
    private final class Connection: @unchecked Sendable {
        var handle: OpaquePointer?

        func close() {
            sqlite3_close(handle)
            handle = nil
        }
    }

    private let path: String
    /// Told around each copy into the file, so a kill -9 in the middle of one is not taken for a file changed behind
    /// the storage's back.
    private let mark: WriteMark?
    private let queue = DispatchQueue(label: "Recipes checkpoint")
    private let connection = Connection()
    /// Taken by the writer's commit for an instant: never held while a checkpoint runs.
    private let state = Mutex(State())

    init(databasePath: String, mark: WriteMark? = nil) {
        path = databasePath
        self.mark = mark
    }

    /// Runs a checkpoint (`body`) with the write mark told.
    private func copying<T>(_ body: () -> T) -> T {
        if let mark { mark.copying(body) } else { body() }
    }

    /// Puts the log hook on the writer's connection: from now on the writer never checkpoints by itself. The
    /// hook holds a reference to this checkpointer for as long as the connection may commit (see `released`).
    func install(on db: Database) {
        state.withLock { $0.hookHolds = true }
        sqlite3_wal_hook(db.sqliteConnection, { context, connection, _, pages in
            if pages >= Checkpointer.writerLimit {
                // Under writes that never pause, a checkpoint beside them never catches the log's end, and SQLite
                // starts the log over only once every page is in the file: the writer finishes the job itself, as
                // SQLite's automatic checkpoint does (the pages copied beside it already are not copied again).
                Unmanaged<Checkpointer>.fromOpaque(context!).takeUnretainedValue().copying {
                    _ = sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
                }
                return SQLITE_OK
            }
            Unmanaged<Checkpointer>.fromOpaque(context!).takeUnretainedValue().committed(logPages: pages)
            return SQLITE_OK
        }, Unmanaged.passRetained(self).toOpaque())
    }

    /// Gives back the hook's reference, once the writer's connection is closed (it cannot commit any more). Once:
    /// a store closed twice must not give it back twice.
    func released() {
        let holds = state.withLock { state -> Bool in
            defer { state.hookHolds = false }
            return state.hookHolds
        }
        if holds { Unmanaged.passUnretained(self).release() }
    }

    /// Called by SQLite on the writer's thread after each commit, with the log's size in pages.
    private func committed(logPages: Int32) {
        guard logPages >= Self.threshold else { return }
        soon()
    }

    /// Starts a checkpoint on the queue unless one is waiting to run already: after a commit past the threshold,
    /// and after writes SQLite's log hook does not see (a backup copied into the database).
    func soon() {
        let start = state.withLock { state -> Bool in
            state.short = 0 // a new request: the retries count again from it
            guard !state.requested, !state.stopped else { return false }
            state.requested = true
            return true
        }
        if start { queue.async { self.checkpoint() } }
    }

    private func checkpoint() {
        let go = state.withLock { state -> Bool in
            state.requested = false
            return !state.stopped
        }
        guard go else { return }
        guard let handle = openedConnection() else { return retryLater() }
        // Passive: as many pages as can go without waiting for a reader or the writer; a page a reader still
        // needs waits for the retry, or the next checkpoint.
        var logPages: Int32 = 0, copied: Int32 = 0
        let result = copying { sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logPages, &copied) }
        if result == SQLITE_OK && copied >= logPages {
            state.withLock { $0.short = 0 }
        } else {
            retryLater()
        }
    }

    /// The checkpoint's connection, opened at its first checkpoint; nil when it cannot be opened now.
    private func openedConnection() -> OpaquePointer? {
        if let handle = connection.handle { return handle }
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            sqlite3_close(handle)
            return nil
        }
        sqlite3_busy_timeout(handle, 5_000)
        // SQLite reads the file's header (and so finds its write-ahead log) at a connection's first statement;
        // before that a checkpoint finds no log to copy.
        guard sqlite3_exec(handle, "PRAGMA schema_version", nil, nil, nil) == SQLITE_OK else {
            sqlite3_close(handle)
            return nil
        }
        connection.handle = handle
        return handle
    }

    /// Tries the checkpoint again a little later (0.1 s, doubling up to 2 s), unless a retry waits already or
    /// `retries` in a row fell short.
    private func retryLater() {
        let wait = state.withLock { state -> Double? in
            state.short += 1
            guard !state.retryWaiting, !state.stopped, state.short <= Self.retries else { return nil }
            state.retryWaiting = true
            return min(0.1 * Double(1 << min(state.short - 1, 5)), 2)
        }
        guard let wait else { return }
        queue.asyncAfter(deadline: .now() + wait) {
            self.state.withLock { $0.retryWaiting = false }
            self.checkpoint()
        }
    }

    /// Stops checkpointing and closes the connection (before the database closes, so the writer's close is the
    /// last, which moves the whole log into the file).
    func stop() {
        state.withLock { $0.stopped = true }
        queue.sync { connection.close() }
    }

    /// Moves the whole log into the database file and removes it, once the store's connections are closed: a
    /// stopped storage's database is then the one file `Recipes.sqlite` (GRDB closes the writer before its readers,
    /// so the writer's close is not the last and leaves the log; this connection's is). Nothing happens while another
    /// connection, in this process or another, still has the file open.
    static func finish(databasePath path: String) {
        var handle: OpaquePointer?
        defer { sqlite3_close(handle) } // the last connection: SQLite copies what is left and removes the log
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else { return }
        sqlite3_busy_timeout(handle, 2_000)
        _ = sqlite3_exec(handle, "PRAGMA wal_checkpoint(TRUNCATE)", nil, nil, nil)
    }

    deinit {
        // Never on `queue` synchronously: the last reference may go inside a checkpoint's block.
        let connection = self.connection
        queue.async { connection.close() }
    }
}
