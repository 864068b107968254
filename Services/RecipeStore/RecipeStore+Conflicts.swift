import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

/// Conflicts as people see them: conflicted copies of recipes and losing values kept on books,
/// catalogue entries and cook-log entries. Both travel inside sync records, so every replica lists,
/// resolves and dismisses the same ones.
extension RecipeStore {
    /// Every unresolved conflict, in feed order.
    public func conflicts() async throws -> [SyncConflict] {
        try await pool.read { db in try Self.openConflicts(in: db) }
    }

    /// A page of the unresolved conflicts in feed order: at most `limit` (1 to `ConflictOps.List.maxLimit`; every one
    /// when `nil`), from after `after` (the `next` of the page before), and the `next` of this page when more follow.
    ///
    /// A page mark is the last conflict's id and the feed position of the record it is kept on (a record's conflicts
    /// go by id). A record changed between pages moves to a later position: its conflicts may be listed again on a
    /// later page, never left out.
    public func conflicts(limit: Int?, after: String?) async throws -> ConflictOps.List.Response {
        let limit = try PageMark.limit(limit, max: ConflictOps.List.maxLimit)
        let start = try after.map { text -> (seq: Int, id: String) in
            let mark = try PageMark.read(text, op: ConflictOps.List.name)
            guard let seq = Int(mark.key), seq >= 0 else { throw PageMark.refusal(text, op: ConflictOps.List.name) }
            return (seq, mark.id)
        }
        return try await pool.read { db in
            // A page also ends before the conflict that would take it past `PageMark.pageBytes` (a kept value is a field
            // of a recipe: a list of steps may be megabytes); its first conflict always goes. Every conflict at once is
            // refused as soon as they pass what one reply may carry.
            var fill = PageFill<SyncConflict, PageMark>(limit: limit,
                orElse: PageMark.tooLargeForOneReply("conflict", op: ConflictOps.List.name, maxLimit: ConflictOps.List.maxLimit))
            let rows = try Row.fetchCursor(db, sql: """
                SELECT seq, body FROM sync_records WHERE conflicts > 0 AND live = 1 AND seq >= ? ORDER BY seq
                """, arguments: [start?.seq ?? 0])
            rows: while let row = try rows.next() {
                let seq: Int = row["seq"]
                for conflict in try Self.conflicts(of: try SyncLog.decode(row["body"], seq: seq), in: db) {
                    if let start, seq == start.seq, conflict.id <= start.id { continue }
                    guard try fill.add(conflict, at: PageMark(id: conflict.id, key: "\(seq)")) else { break rows }
                }
            }
            return .init(conflicts: fill.items, next: fill.next?.text)
        }
    }

    /// Takes the losing values: a copy's into its original recipe (the copy is removed), a kept value into its record.
    public func resolveConflict(id: String) async throws -> SyncConflict {
        let photos = self.photos
        let conflict = try await write { db -> SyncConflict in
            let conflict = try Self.findConflict(id, in: db)
            guard let original = try SyncLog.storedRecord(conflict.kind, conflict.recordID, in: db), original.isLive else {
                throw ServiceError(.notFound, "the \(conflict.kind.rawValue) this conflict is about (\(conflict.recordID)) was deleted; "
                                   + (conflict.copyID == nil ? "dismiss the conflict" : "the copy stays as a recipe of its own: dismiss the conflict to remove it"))
            }
            var states = original.states
            if let copyID = conflict.copyID {
                guard let copy = try SyncLog.storedRecord(.recipe, copyID, in: db) else {
                    throw ServiceError(.notFound, "no conflicted copy \(copyID)")
                }
                for field in conflict.fields {
                    guard var value = copy.states[field]?.value else { continue }
                    if field == "name", let name = value.string, name.hasSuffix(Self.copySuffix) {
                        value = .string(String(name.dropLast(Self.copySuffix.count)))
                    }
                    states[field]?.value = value
                }
                try SyncLog.writeTables(.recipe, conflict.recordID, states: states, photos: photos, in: db)
                try Self.removeCopy(copyID, in: db)
                // A photo it names whose blob is lost here is noted, for the next sync to bring back.
                self.noteLost(SyncApplier.missingPhotos(states, photos: photos))
            } else if let field = conflict.fields.first, let value = conflict.lostValues?[field] {
                states[field]?.value = value
                try SyncLog.writeTables(conflict.kind, conflict.recordID, states: states, photos: photos, in: db)
                if conflict.kind == .ingredient { try SyncLog.settleCatalogue(in: db) }
                try SyncLog.capture(in: db)
                try Self.setConflictState(conflict, "resolved", in: db)
            }
            return conflict
        }
        await collectUnusedPhotos()
        return conflict
    }

    /// Drops a conflict: a conflicted copy is removed, a kept value is marked dismissed.
    public func dismissConflict(id: String) async throws -> SyncConflict {
        let conflict = try await write { db -> SyncConflict in
            let conflict = try Self.findConflict(id, in: db)
            if let copyID = conflict.copyID {
                try Self.removeCopy(copyID, in: db)
            } else {
                try Self.setConflictState(conflict, "dismissed", in: db)
            }
            return conflict
        }
        await collectUnusedPhotos()
        return conflict
    }

    static let copySuffix = " (conflicted copy)"

    static func openConflicts(in db: Database) throws -> [SyncConflict] {
        var found: [SyncConflict] = []
        for row in try Row.fetchAll(db, sql: "SELECT seq, body FROM sync_records WHERE conflicts > 0 AND live = 1 ORDER BY seq") {
            let record = try SyncLog.decode(row["body"], seq: row["seq"])
            found += try conflicts(of: record, in: db)
        }
        return found
    }

    private static func conflicts(of record: SyncRecord, in db: Database) throws -> [SyncConflict] {
        let states = record.states
        if record.kind == .recipe {
            guard let original = states[SyncRecord.conflictOfField]?.value.object?["recipe"]?.string else { return [] }
            let lost = states.filter { $0.value.clock.vv[SyncApplier.conflictReplica] != nil }.keys.sorted()
            let originalName = try SyncLog.storedRecord(.recipe, original, in: db)?.fields["name"]?.string
            return [SyncConflict(id: record.id, kind: .recipe, recordID: original, recordName: originalName, fields: lost,
                                 lostValues: nil, copyID: record.id)]
        }
        let name = record.fields["title"]?.string ?? record.fields["recipeName"]?.string ?? (record.kind == .ingredient ? record.id : nil)
        return SyncLog.openConflicts(in: record.fields).compactMap { key in
            guard let object = record.fields[key]?.object, let field = object["field"]?.string else { return nil }
            return SyncConflict(id: String(key.dropFirst(SyncRecord.conflictPrefix.count)), kind: record.kind, recordID: record.id,
                                recordName: name, fields: [field], lostValues: [field: object["value"] ?? .null], copyID: nil)
        }
    }

    private static func findConflict(_ id: String, in db: Database) throws -> SyncConflict {
        let key = id.uppercased()
        // A recipe's conflict is its conflicted copy, by the copy's id: read at once. A kept value's is on a record
        // that does not say which: looked for among those that hold any.
        if let copy = try SyncLog.storedRecord(.recipe, key, in: db), copy.isLive,
           let conflict = try conflicts(of: copy, in: db).first(where: { $0.id == key }) {
            return conflict
        }
        guard let conflict = try openConflicts(in: db).first(where: { $0.id == key }) else {
            throw ServiceError(.notFound, "no unresolved conflict \(id.prefix(64)); `recipes conflicts` lists them")
        }
        return conflict
    }

    private static func removeCopy(_ copyID: String, in db: Database) throws {
        try SearchIndex.remove(recipeID: copyID, in: db)
        try db.execute(sql: "DELETE FROM recipes WHERE id = ?", arguments: [copyID])
    }

    /// Marks a kept value resolved or dismissed: a write of this replica to the record's conflict field.
    private static func setConflictState(_ conflict: SyncConflict, _ newState: String, in db: Database) throws {
        let key = SyncRecord.conflictPrefix + conflict.id
        guard var object = try SyncLog.storedRecord(conflict.kind, conflict.recordID, in: db)?.fields[key]?.object else { return }
        object["state"] = .string(newState)
        try SyncLog.writeRecordOnly(conflict.kind, conflict.recordID, field: key, value: .object(object), in: db)
    }
}
