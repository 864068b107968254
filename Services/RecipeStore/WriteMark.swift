import Foundation
import GRDB
import RecipeProtocol

/// The last write this replica committed to its database, noted in a small file beside it
/// (`Recipes.sqlite-lastwrite`: its replica id and write number).
///
/// An older copy of the database put back over the file in place (`cp` onto it, which keeps the file's identity) is
/// not told by the file's identity at open; its write number is. A database whose replica id is the mark's and whose
/// write number is behind it, or whose history does not know the mark's id at all (a copy from before its last new
/// incarnation, or another replica's database copied in), lost writes its peers may hold: it takes a new incarnation,
/// so its next writes never reuse those numbers. A whole data folder put back (the mark with it) is not told so; a
/// peer's records tell it at the next sync when it edited on top of the lost writes.
///
/// Written after each commit that moved the write number, without a sync of its own: after a power loss the mark is
/// never ahead of the database (the commit was on disk first), only behind it, which tells nothing.
final class WriteMark: TransactionObserver, @unchecked Sendable {
    static let fileName = RecipeVault.databaseFileName + "-lastwrite"

    /// The last note written (under the writer's queue only: GRDB calls a transaction observer there).
    private var noted: (replica: String, write: Int64)?
    private let descriptor: Int32

    /// The mark for the database at `databasePath`; nil when its file cannot be opened for writing.
    init?(databasePath: String) {
        let descriptor = open(Self.path(databasePath), O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    static func path(_ databasePath: String) -> String {
        URL(fileURLWithPath: databasePath).deletingLastPathComponent().appendingPathComponent(fileName).path
    }

    /// What the mark beside `databasePath` says; nil when there is none or it does not read as one.
    static func read(databasePath: String) -> (replica: String, write: Int64)? {
        guard let data = FileManager.default.contents(atPath: path(databasePath)), data.count <= size,
              let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(whereSeparator: \.isWhitespace)
        guard parts.count == 2, let write = Int64(parts[1]), write >= 0, parts[0].count <= 64 else { return nil }
        return (String(parts[0]), write)
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
        let write = Int64(values["write"] ?? "") ?? 0
        guard noted?.replica != replica || noted?.write != write else { return }
        var text = Array("\(replica) \(write)\n".utf8.prefix(Self.size))
        text += Array(repeating: UInt8(ascii: " "), count: Self.size - text.count)
        // One write, in place, of a fixed size; a failure leaves the last note (behind, which tells nothing).
        guard text.withUnsafeBytes({ pwrite(descriptor, $0.baseAddress, $0.count, 0) }) == Self.size else { return }
        noted = (replica, write)
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
    func databaseDidChange(with event: DatabaseEvent) {}
    func databaseWillCommit() throws {}
    func databaseDidCommit(_ db: Database) { try? note(db) }
    func databaseDidRollback(_ db: Database) {}

    /// Why the database at `databasePath` is an older copy than the last one this replica wrote there (see the type);
    /// nil when it is not, or there is no mark to tell.
    static func olderCopy(_ db: Database, databasePath: String) throws -> String? {
        guard let mark = read(databasePath: databasePath) else { return nil }
        let state = try SyncState.load(db)
        if mark.replica == state.replica {
            guard mark.write > state.write else { return nil }
            return "the database was put back from an older copy (its last write is \(state.write), this folder's was \(mark.write))"
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
