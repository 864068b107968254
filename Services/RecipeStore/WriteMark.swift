import Foundation
import GRDB
import RecipeProtocol
import Synchronization

/// The last write this replica committed to its database, and when it last changed the database file, noted in a
/// small file beside it (`Recipes.sqlite-lastwrite`: its replica id, write number and the file's status-change time).
///
/// An older copy of the database put back over the file in place (`cp` onto it, which keeps the file's identity) is
/// not told by the file's identity at open; its write number is. A database whose replica id is the mark's and whose
/// write number is behind it, or whose history does not know the mark's id at all (a copy from before its last new
/// incarnation, or another replica's database copied in), lost writes its peers may hold: it takes a new incarnation,
/// so its next writes never reuse those numbers.
///
/// A whole data folder copied back over in place brings its mark with it, so the numbers agree; but no copy can set
/// the file's status-change time (`st_ctime`: the kernel's, moved by every write and by any copy onto the file, and
/// kept by none). The mark holds the time the storage last left the file at, and a file changed since, while the
/// storage was stopped, may be an older copy: it takes a new incarnation too (a copy of the current one, a `chmod`
/// or a `touch` cost one needlessly, which is harmless). While the storage itself copies the log into the file (a
/// checkpoint, or the close) the mark says `-` instead of a time: a kill -9 in the middle leaves a file whose time no
/// mark holds, and tells nothing. A file-system or machine snapshot rolled back brings the file's time back with it
/// and is not told so; its peers' newest writes of it tell it at the first sync (`SyncSeen`).
///
/// Written after each commit that moved the write number and around each copy into the file, without a sync of its
/// own: after a power loss the mark is never ahead of the database (the commit was on disk first), only behind it,
/// which tells nothing, or holds an earlier time of the file, which costs a new incarnation.
final class WriteMark: TransactionObserver, @unchecked Sendable {
    static let fileName = RecipeVault.databaseFileName + "-lastwrite"

    /// What the mark says.
    struct Note: Equatable {
        var replica: String
        var write: Int64
        /// The database file's status-change time, in nanoseconds, when the storage last left it; nil while it was
        /// copying the log into it, or in a mark from before it was kept.
        var fileTime: Int64?
    }

    private struct State {
        /// The last note written.
        var noted: Note?
        /// Copies into the file under way (a checkpoint beside the writer and the writer's own may overlap).
        var copying = 0
    }

    private let state = Mutex(State())
    private let descriptor: Int32
    private let databasePath: String

    /// The mark for the database at `databasePath`; nil when its file cannot be opened for writing.
    init?(databasePath: String) {
        let descriptor = open(Self.path(databasePath), O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
        self.databasePath = databasePath
    }

    deinit { close(descriptor) }

    static func path(_ databasePath: String) -> String {
        URL(fileURLWithPath: databasePath).deletingLastPathComponent().appendingPathComponent(fileName).path
    }

    /// The status-change time of the file at `path`, in nanoseconds; nil when there is none.
    static func fileTime(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
    }

    /// What the mark beside `databasePath` says; nil when there is none or it does not read as one.
    static func read(databasePath: String) -> Note? {
        guard let data = FileManager.default.contents(atPath: path(databasePath)), data.count <= size,
              let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(whereSeparator: \.isWhitespace)
        guard parts.count == 2 || parts.count == 3, let write = Int64(parts[1]), write >= 0, parts[0].count <= 64 else { return nil }
        var note = Note(replica: String(parts[0]), write: write)
        if parts.count == 3, parts[2] != "-" {
            guard let time = Int64(parts[2]) else { return nil }
            note.fileTime = time
        }
        return note
    }

    /// The mark's fixed size: each note overwrites the last whole, padded with spaces.
    static let size = 96

    /// Notes what the database says now: at open, and after every commit of the writing connection (one read of
    /// two rows; the file is written only when they changed). `sync_state` has no row ids, so SQLite tells no change
    /// of it: the commit is the moment, and what it committed is read back.
    func note(_ db: Database) throws {
        let rows = try Row.fetchAll(db.cachedStatement(sql: "SELECT key, value FROM sync_state WHERE key IN ('replica', 'write')"))
        var values: [String: String] = [:]
        for row in rows { values[row["key"]] = row["value"] }
        guard let replica = values["replica"] else { return }
        let number = Int64(values["write"] ?? "") ?? 0
        state.withLock { state in
            guard state.noted?.replica != replica || state.noted?.write != number else { return }
            write(Note(replica: replica, write: number), &state)
        }
    }

    /// Runs `body`, which may write the database file (a checkpoint, the close), with the mark saying so; after it,
    /// the mark holds the file's time again.
    func copying<T>(_ body: () throws -> T) rethrows -> T {
        state.withLock { state in
            state.copying += 1
            if let noted = state.noted { write(noted, &state) }
        }
        defer {
            state.withLock { state in
                state.copying -= 1
                if let noted = state.noted { write(noted, &state) }
            }
        }
        return try body()
    }

    /// Notes the file's time now (after the storage changed the file outside a copy: the open's own writes, a close).
    func refresh() {
        state.withLock { state in
            if let noted = state.noted { write(noted, &state) }
        }
    }

    /// Writes `note` with the file's time now (or `-` while a copy is under way), in place, one write of a fixed
    /// size; a failure leaves the last note (behind, which tells nothing).
    private func write(_ note: Note, _ state: inout State) {
        var note = note
        note.fileTime = state.copying > 0 ? nil : Self.fileTime(databasePath)
        guard note != state.noted || state.noted == nil else { return }
        var text = Array("\(note.replica) \(note.write) \(note.fileTime.map(String.init) ?? "-")\n".utf8.prefix(Self.size))
        text += Array(repeating: UInt8(ascii: " "), count: Self.size - text.count)
        guard text.withUnsafeBytes({ pwrite(descriptor, $0.baseAddress, $0.count, 0) }) == Self.size else { return }
        state.noted = note
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
    func databaseDidChange(with event: DatabaseEvent) {}
    func databaseWillCommit() throws {}
    func databaseDidCommit(_ db: Database) { try? note(db) }
    func databaseDidRollback(_ db: Database) {}

    /// Why the database at `databasePath` is an older copy than the last one this replica wrote there (see the type);
    /// nil when it is not, or there is no mark to tell. `fileTime` is the file's time before this start changed it.
    static func olderCopy(_ db: Database, databasePath: String, fileTime: Int64?) throws -> String? {
        guard let mark = read(databasePath: databasePath) else { return nil }
        let state = try SyncState.load(db)
        if mark.replica == state.replica {
            if mark.write > state.write {
                return "the database was put back from an older copy (its last write is \(state.write), this folder's was \(mark.write))"
            }
            if let noted = mark.fileTime, let fileTime, fileTime != noted {
                return "the database file changed while the storage was stopped (put back over in place, with its data folder, "
                    + "from an older copy, or written by something else): it may have lost writes"
            }
            return nil
        }
        // A database that never wrote has nothing a peer could hold; a mark of one of its own earlier incarnations (its
        // history names each, with the one it became) is only behind. The retired list is not that lineage: it also
        // holds other replicas' ids this one heard had ended.
        guard state.write > 0 else { return nil }
        let history = try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'incarnations'") ?? ""
        if history.contains(mark.replica) { return nil }
        return "the database is not the one last written in this folder (that was replica \(mark.replica)): an older copy was put back, or another replica's copied in"
    }
}
