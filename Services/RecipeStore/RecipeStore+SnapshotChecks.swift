import Crypto
import Foundation
import GRDB
import RecipeProtocol
import Synchronization

/// What a received snapshot is checked for before it is installed: SQLite's integrity check, this storage's
/// schema, references, every value's type, and change records that read. The checks take about as long as
/// sending the copy's photos: so the write that brings a copy's last byte starts them (when the sender says
/// how many bytes come), and `sync.install` takes the verdict; without that, `sync.install` runs them itself.
extension RecipeStore {
    /// This storage's schema, which a snapshot must have exactly.
    struct SchemaFacts: Sendable {
        var migrations: [String]
        var pageSize: Int
        var schema: [String]
    }

    func schemaFacts() async throws -> SchemaFacts {
        try await pool.read { db in
            SchemaFacts(migrations: try Migrations.migrator.appliedMigrations(db), pageSize: try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0,
                        schema: try Self.schema(db))
        }
    }

    /// The checks' verdict, in three parts that `installSnapshot` reads in order, around the checks that depend on
    /// the install request (the source replica and the last change), so the first problem in order is the one told.
    struct SnapshotCheck: Sendable {
        /// Integrity, schema and page size: a refusal (the records are sent instead) or an error (damaged).
        var structure: Result<String?, ServiceError>
        /// References and value types.
        var contents: Result<Void, ServiceError>
        /// The change records.
        var feed: Result<Void, ServiceError>
    }

    static func damagedSnapshot(_ id: UUID, _ what: String) -> ServiceError {
        ServiceError(.invalidArgument, "snapshot \(id.uuidString) \(what); nothing was installed")
    }

    /// Checks the snapshot file at `path` (read only). The change records are read on a second connection while
    /// the first checks everything else: the two halves take about as long each, and a small server has two
    /// cores. Only a copy whose tables, indexes and triggers are exactly this storage's is read so early
    /// (anything else could make "the change records" a view that never ends).
    static func check(snapshotAt path: String, id: UUID, against facts: SchemaFacts) async -> SnapshotCheck {
        var failed = SnapshotCheck(structure: .success(nil), contents: .success(()), feed: .success(()))
        var readOnly = Configuration()
        readOnly.readonly = true
        let copy: DatabaseQueue
        do {
            // Writable: FTS5's own check of the search index is an INSERT command (it changes nothing).
            copy = try DatabaseQueue(path: path)
        } catch {
            failed.structure = .failure(damagedSnapshot(id, "is damaged or not a database this storage can open"))
            return failed
        }
        defer { try? copy.close() }
        let ownSchema = (try? await copy.read { db in
            try Migrations.migrator.appliedMigrations(db) == facts.migrations && Self.schema(db) == facts.schema
        }) ?? false
        let early: Task<Result<Void, ServiceError>, Never>? = {
            guard ownSchema, let feedCopy = try? DatabaseQueue(path: path, configuration: readOnly) else { return nil }
            return Task {
                defer { try? feedCopy.close() }
                return await outcome(id) { try await feedCopy.read { db in try Self.feedProblem(inSnapshot: db, id: id) } }
            }
        }()
        var verdict = failed
        verdict.structure = await outcome(id) { try await copy.read { db in try Self.structureProblem(inSnapshot: db, id: id, facts: facts) } }
        if case .success(nil) = verdict.structure {
            verdict.contents = await outcome(id) { try await copy.read { db in try Self.contentsProblem(inSnapshot: db, id: id) } }
            if let early {
                verdict.feed = await early.value
            } else {
                verdict.feed = await outcome(id) { try await copy.read { db in try Self.feedProblem(inSnapshot: db, id: id) } }
            }
        } else {
            // Not this storage's schema: the records' verdict is never read (a copy is judged as if checked in one pass).
            _ = await early?.value
        }
        if case .success(nil) = verdict.structure {
            // SQLite's integrity check does not look inside the search index (FTS5 keeps it in blobs of its own
            // format); a damaged one would fail every search from then on. FTS5's own check reads it against its
            // content. It is an INSERT command (it changes nothing), so it runs once the other connection is done.
            do {
                try await copy.writeWithoutTransaction { db in try db.execute(sql: "INSERT INTO recipes_fts(recipes_fts) VALUES('integrity-check')") }
            } catch {
                verdict.structure = .failure(damagedSnapshot(id, "has a damaged search index (SQLite: \(String(describing: error).prefix(200)))"))
            }
        }
        return verdict
    }

    /// What `body` returned or threw; anything but a `ServiceError` is snapshot `id` failing to read (named, with why).
    private static func outcome<T: Sendable>(_ id: UUID, _ body: () async throws -> T) async -> Result<T, ServiceError> {
        do {
            return .success(try await body())
        } catch let error as ServiceError {
            return .failure(error)
        } catch {
            return .failure(damagedSnapshot(id, "could not be read to the end (SQLite: \(String(describing: error).prefix(300)))"))
        }
    }

    /// Why the snapshot open in `db` cannot be installed here, as far as its make goes (nil: it can). Throws for a
    /// damaged copy; a schema this storage does not run is a refusal, since records can still be sent.
    static func structureProblem(inSnapshot db: Database, id: UUID, facts: SchemaFacts) throws -> String? {
        // The full check, not the quick one: an index that disagrees with its table (which only this finds) would
        // give wrong answers from then on.
        let check = (try? String.fetchAll(db, sql: "PRAGMA integrity_check")) ?? ["unreadable"]
        guard check == ["ok"] else { throw damagedSnapshot(id, "is damaged (SQLite: \(check.prefix(3).joined(separator: "; ").prefix(300)))") }
        let theirs = (try? Migrations.migrator.appliedMigrations(db)) ?? []
        guard theirs == facts.migrations else {
            return "the snapshot's schema (\(theirs.last ?? "none")) is not this storage's (\(facts.migrations.last ?? "none")); the records are sent instead"
        }
        guard try Int.fetchOne(db, sql: "PRAGMA page_size") == facts.pageSize else { return "the snapshot's page size is not this storage's" }
        // The same migrations must have made the same tables, indexes and triggers: a copy whose schema was edited
        // (a column gone, a trigger changed) would fail, or quietly misbehave, on the first statement that uses it.
        guard try Self.schema(db) == facts.schema else { throw damagedSnapshot(id, "has tables, indexes or triggers other than its migrations make") }
        return nil
    }

    /// Throws when the snapshot open in `db` is not the one `request` describes: made on another replica, or
    /// ending at another change. Read once the structure passed.
    static func identityProblem(inSnapshot db: Database, request: SyncOps.Install.Request) throws {
        guard let replica = try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'replica'"),
              replica == request.from else { throw damagedSnapshot(request.snapshot, "was not made on replica \(request.from.prefix(80))") }
        guard try Int.fetchOne(db, sql: "SELECT COALESCE(MAX(seq), 0) FROM sync_records") == request.seq else {
            throw damagedSnapshot(request.snapshot, "does not end at change \(request.seq)")
        }
    }

    /// Throws when a row of the snapshot open in `db` refers to nothing, or holds a value the storage could not
    /// read back. Read once the structure passed.
    static func contentsProblem(inSnapshot db: Database, id: UUID) throws {
        guard try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").isEmpty else { throw damagedSnapshot(id, "has rows whose references lead nowhere") }
        // Every value as the storage reads it: the declared type (or NULL where allowed), ids as canonical
        // UUIDs and dates as dates, so nothing in the copy can stop a later read.
        let hex = "[0-9A-F]"
        let uuid = [8, 4, 4, 4, 12].map { String(repeating: hex, count: $0) }.joined(separator: "-")
        let date = "[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9][ T][0-2][0-9]:[0-5][0-9]:[0-5][0-9]*"
        let uuidColumns: Set<String> = ["id", "recipeId", "bookId", "ingredientId", "jobId"]
        let tables = try String.fetchAll(db, sql: """
            SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'recipes_fts%'
            AND name != 'grdb_migrations' ORDER BY name
            """)
        for table in tables {
            var checks: [(column: String, allowed: String, condition: String)] = []
            for column in try Row.fetchAll(db, sql: "SELECT name, type, \"notnull\" FROM pragma_table_info(?)", arguments: [table]) {
                let name: String = column["name"]
                let type = (column["type"] as String).uppercased()
                let quoted = "\"\(name)\""
                var allowed: [String]
                if type.contains("INT") { allowed = ["integer"] }
                else if type.contains("REAL") { allowed = ["real", "integer"] }
                else if type.contains("BLOB") { allowed = ["blob"] }
                else if type.contains("TEXT") || type.contains("DATE") { allowed = ["text"] }
                else { continue }
                if (column["notnull"] as Int) == 0 { allowed.append("null") }
                var condition = "typeof(\(quoted)) NOT IN (\(allowed.map { "'\($0)'" }.joined(separator: ", ")))"
                if type.contains("TEXT") && uuidColumns.contains(name) && table != "sync_records" && table != "sync_held" && table != "sync_dangling" {
                    condition += " OR (\(quoted) IS NOT NULL AND \(quoted) NOT GLOB '\(uuid)')"
                }
                if type.contains("DATE") || name.hasSuffix("At") {
                    condition += " OR (\(quoted) IS NOT NULL AND \(quoted) NOT GLOB '\(date)')"
                }
                checks.append((name, allowed.first ?? type, condition))
            }
            // One pass over the table for all its columns; only a copy that fails is read again, to name the column.
            guard !checks.isEmpty, try Bool.fetchOne(db, sql: """
                SELECT EXISTS (SELECT 1 FROM "\(table)" WHERE \(checks.map { "(\($0.condition))" }.joined(separator: " OR ")))
                """) == true else { continue }
            for check in checks where try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \"\(table)\" WHERE \(check.condition))") == true {
                throw damagedSnapshot(id, "has a value in \(table).\(check.column) that is not a \(check.allowed) this storage reads")
            }
            throw damagedSnapshot(id, "has a value in \(table) that this storage cannot read")
        }
    }

    /// Throws when a change record of the snapshot open in `db` does not read as one: the feed is what this
    /// replica will send on and merge against.
    static func feedProblem(inSnapshot db: Database, id: UUID) throws {
        // Read as raw values: this may run before the values' types are checked, and a NULL or a blob where a
        // number or text belongs must be a refusal, not a trap.
        let records = try Row.fetchCursor(db, sql: "SELECT seq, body FROM sync_records")
        while let row = try records.next() {
            let seq = Int.fromDatabaseValue(row[0] as DatabaseValue)
            guard let seq, let body = String.fromDatabaseValue(row[1] as DatabaseValue),
                  (try? SyncLog.decode(body, seq: seq)) != nil else {
                throw damagedSnapshot(id, "has a change record (\(seq.map(String.init) ?? "without a number")) that does not read")
            }
        }
    }
}

/// The snapshots being received, as far as memory goes: each one's bytes so far and the running SHA-256 of them,
/// and, once the last byte is in, the check started on the whole copy. A storage restarted part way forgets them;
/// `sync.install` then reads the file again and checks it itself, as it does for a sender that gives no total.
final class IncomingSnapshots: Sendable {
    struct Started: Sendable {
        var bytes: Int
        var sha256: String
        var check: Task<RecipeStore.SnapshotCheck, Never>
    }

    // @unchecked: `SHA256` is a plain value (the digest's state, copied with the entry) that Crypto does not mark
    // Sendable; an entry is only read or changed under the lock, or after being taken out of it.
    private struct Entry: @unchecked Sendable {
        var bytes = 0
        var hasher: SHA256? = SHA256()
        var started: Started?
        /// A check was started for this snapshot once: bytes written after it leave the check to install (a sender
        /// that keeps adding a byte never gets a whole check out of each).
        var checkedOnce = false
    }

    private let entries = Mutex<[UUID: Entry]>([:])

    /// Notes `bytes` written to snapshot `id` at `offset` (the file's end). The running digest goes on only from
    /// where it stopped; any write drops a check started before it.
    func wrote(_ bytes: Data, to id: UUID, at offset: Int) {
        var entry = entries.withLock { all in all.removeValue(forKey: id) } ?? Entry()
        if offset == 0 && !entry.checkedOnce { entry = Entry() }
        if entry.bytes != offset { entry.hasher = nil }
        entry.hasher?.update(data: bytes)
        entry.bytes = offset + bytes.count
        entry.started = nil
        entries.withLock { $0[id] = entry }
    }

    /// The lowercase-hex SHA-256 of snapshot `id`'s first `bytes` bytes, if every one of them was seen here.
    func digest(of id: UUID, bytes: Int) -> String? {
        entries.withLock { all in
            guard let entry = all[id], entry.bytes == bytes, let hasher = entry.hasher else { return nil }
            return hasher.finalize().map { String(format: "%02x", $0) }.joined()
        }
    }

    /// Starts `check` for snapshot `id` as it stands at `bytes` bytes with digest `sha256`.
    func startCheck(of id: UUID, bytes: Int, sha256: String, _ check: @escaping @Sendable () async -> RecipeStore.SnapshotCheck) {
        entries.withLock { all in
            guard all[id]?.bytes == bytes, all[id]?.checkedOnce == false else { return }
            all[id]?.started = Started(bytes: bytes, sha256: sha256, check: Task(operation: check))
            all[id]?.checkedOnce = true
        }
    }

    /// Forgets snapshot `id` and hands over the check its last write started, if any.
    func take(_ id: UUID) -> Started? {
        entries.withLock { all in all.removeValue(forKey: id)?.started }
    }

    /// Forgets the snapshots whose files are gone from `folder` (removed as stale, or installed).
    func forgetRemoved(in folder: URL) {
        entries.withLock { all in
            for id in all.keys where !FileManager.default.fileExists(atPath: folder.appendingPathComponent("\(id.uuidString).sqlite").path) {
                all.removeValue(forKey: id)
            }
        }
    }
}
