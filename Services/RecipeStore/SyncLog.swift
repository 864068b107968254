import Crypto
import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

/// Turning committed table changes into versioned feed entries, and feed entries back into tables.
///
/// Here: capturing local changes and keeping the feed's records. `SyncLog+Values` reads a record's fields
/// from the tables; `SyncLog+Tables` writes merged fields back into them.
enum SyncLog {
    static let deleted = SyncRecord.deletedField
    // Made once: every applied or captured record goes through them. The wire's coders: records hold no
    // dates, and what they write (slashes unescaped, keys in their order) any JSON reader reads back the same.
    private static let encoder = WireJSONEncoder()
    private static let decoder = WireJSONDecoder()

    // MARK: Capturing local changes

    /// Records every change marked by the triggers in this transaction: changed
    /// fields get a new version (this replica's next write, a fresh stamp), a
    /// vanished record becomes a tombstone that has seen every write.
    ///
    /// `asWritten`: the changes are a person's write, not a merge's effects or an older version's leftovers. Such a
    /// record is checked as a replica checks what it receives, and the write is refused when it would be held back
    /// there (replicas would never agree on it); a deletion always goes through. A recipe its write just wrote from a
    /// draft (`RecipeStore.writeFields`, which every such write validates first with `RecipeDraft.validate`, the rules
    /// a replica applies to a recipe's record) has its fields' shapes checked, not its draft decoded and validated again.
    static func capture(in db: Database, asWritten: Bool = false) throws {
        let pending = try Row.fetchAll(db.cachedStatement(sql: "SELECT kind, id FROM sync_pending"))
        guard !pending.isEmpty else { return }
        var state = try SyncState.load(db)
        var tick: (write: Int64, stamp: String)?
        var seq = try nextSeq(in: db)
        func localClock(after previous: SyncClock?) -> SyncClock {
            if tick == nil { tick = state.tick() }
            var vv = previous?.vv ?? [:]
            vv[state.replica] = tick!.write
            return SyncClock(vv: vv, stamp: tick!.stamp)
        }
        for row in pending {
            guard let kind = SyncKind(rawValue: row["kind"]) else { continue }
            let id: String = row["id"]
            let stored = try storedRecord(kind, id, in: db)
            // Field names in the one Unicode form the tables hold (a keyword's text is in its name; an older version's
            // record may have another), so a name is found again by its bytes.
            var states = SyncRecord.composedKeys(stored?.states ?? [:])
            var changed = false
            if let original = stored?.states, original.keys.contains(where: { !$0.utf8.allSatisfy { $0 < 0x80 } && !$0.composed.utf8.elementsEqual($0.utf8) }) {
                changed = true
            }
            if kind == .recipe, states["photos"] != nil || states["keywords"] != nil {
                // Whole-list photos and keywords of an older version give way to set elements.
                states.removeValue(forKey: "photos")
                states.removeValue(forKey: "keywords")
                changed = true
            }
            var fromDraft = false
            if var values = try currentValues(kind, id, stored: states, fromDraft: &fromDraft, in: db) {
                // A reference whose target is gone (deleted, or not arrived yet) reads NULL in the table but stays
                // the record's value: the unlinking was the database's doing, not a person's edit.
                let genesis = stored == nil && SampleIdentity.isSample(kind, id: id, values: values)
                if let (field, table) = referenceField(kind) {
                    // A sample filed in a sample book deleted here is the sample still: it names that book, as on
                    // every replica that loaded the samples before the delete reached it.
                    let kept = states[field]?.value.string ?? (genesis ? SampleIdentity.reference(kind, id: id) : nil)
                    if values[field] == .null, let kept, try !exists(kept, in: table, db) {
                        values[field] = .string(kept)
                        try remember(dangling: kind, id, target: kept, in: db)
                    } else {
                        // Linked, or set to something else: nothing waits to be relinked any more.
                        try db.cachedStatement(sql: "DELETE FROM sync_dangling WHERE kind = ? AND id = ?").execute(arguments: [kind.rawValue, id])
                    }
                }
                // A step whose id an ingredient line of the recipe holds is stored under an id made from it
                // (`assembled`); the record keeps the id the write gave. Read back, that made id is the merge's doing,
                // not a person's edit, while the lines that caused it are there still.
                if kind == .recipe, let recorded = states["instructions"]?.value, let steps = values["instructions"],
                   !recorded.isIdentical(to: steps),
                   distinctStepIDs(recorded, besides: values["ingredients"])?.isIdentical(to: steps) == true {
                    values["instructions"] = recorded
                }
                for (name, value) in values where !(states[name]?.value.isIdentical(to: value) ?? false) {
                    // This replica replacing its own value: a conflicted copy of that value made elsewhere is withdrawn when it arrives.
                    if kind == .recipe, let previous = states[name]?.clock.stamp, StampOrder.parts(previous)?.replica == Substring(state.replica) {
                        try db.cachedStatement(sql: "INSERT OR IGNORE INTO sync_replaced (recordId, field, stamp) VALUES (?, ?, ?)")
                            .execute(arguments: [id, name, previous])
                    }
                    states[name] = SyncField(value: value, clock: genesis ? .genesis : localClock(after: states[name]?.clock))
                    changed = true
                }
                // A photo or keyword no longer there was removed.
                for (name, field) in states where SyncRecord.isElementField(name) && values[name] == nil && field.value != .null {
                    states[name] = SyncField(value: .null, clock: localClock(after: field.clock))
                    changed = true
                }
                if states[deleted] == nil || !SyncMerge.isLive(states) {
                    states[deleted] = SyncField(value: .bool(false), clock: genesis ? .genesis : localClock(after: states[deleted]?.clock))
                    changed = true
                }
            } else if stored != nil, SyncMerge.isLive(states) {
                // Deleted here, having seen every write of every field. Its photos and keywords go with it,
                // under the same version: a tombstone names no photo, so no replica needs the blobs for it.
                var vv: [String: Int64] = [:]
                for field in states.values { vv = SyncClock.join(vv, field.clock.vv) }
                let clock = localClock(after: SyncClock(vv: vv, stamp: ""))
                states[deleted] = SyncField(value: .bool(true), clock: clock)
                for (name, field) in states where SyncRecord.isElementField(name) && field.value != .null {
                    states[name] = SyncField(value: .null, clock: clock)
                }
                changed = true
            }
            if changed {
                // A photo or keyword removed here takes the removals kept beside it (`removed:<element>`) along.
                SyncMerge.settleRemovals(&states)
                let record = SyncRecord(kind: kind, id: id, seq: seq, states: states)
                if asWritten, SyncMerge.isLive(states), let problem = SyncValidation.valuesProblem(record, draftValidated: fromDraft) {
                    throw ServiceError(.invalidArgument, "\(problem); nothing was stored (a \(kind.personName) like this would not be taken by another replica)")
                }
                try save(record, source: state.replica, in: db)
                seq += 1
            }
            // A recipe's modification time is its newest version's, on every replica alike (a write that
            // changed nothing leaves it as it was).
            // (A new recipe's row already says so: it is not written again.)
            if kind == .recipe { try dateRecipe(id, by: states, in: db) }
        }
        try db.execute(sql: "DELETE FROM sync_pending")
        if tick != nil { try state.save(db) }
    }

    /// A local write to a field no table holds (a kept conflict's state): a new version of this replica.
    static func writeRecordOnly(_ kind: SyncKind, _ id: String, field: String, value: JSONValue, in db: Database) throws {
        try capture(in: db)
        guard let stored = try storedRecord(kind, id, in: db) else { return }
        var state = try SyncState.load(db)
        let tick = state.tick()
        var states = stored.states
        var vv = states[field]?.clock.vv ?? [:]
        vv[state.replica] = tick.write
        states[field] = SyncField(value: value, clock: SyncClock(vv: vv, stamp: tick.stamp))
        try save(SyncRecord(kind: kind, id: id, seq: try nextSeq(in: db), states: states), source: state.replica, in: db)
        try state.save(db)
    }

    /// Sets a recipe's modification time to its newest version's (`modifiedAt`), as on every replica holding that version.
    static func dateRecipe(_ id: String, by states: [String: SyncField], in db: Database) throws {
        guard let modified = modifiedAt(states) else { return }
        try db.cachedStatement(sql: "UPDATE recipes SET updatedAt = ?1 WHERE id = ?2 AND updatedAt IS NOT ?1")
            .execute(arguments: [StoredDate(modified), id])
    }

    /// When a recipe last changed, as every replica holding the same version agrees: the wall-clock
    /// time of its newest field's stamp (`nil` for the sample collection, whose stamps carry no time).
    static func modifiedAt(_ states: [String: SyncField]) -> Date? {
        var wall: Int64 = 0
        for (name, field) in states where !SyncRecord.isRecordOnlyField(name) {
            if let parts = StampOrder.parts(field.clock.stamp), parts.wall > wall { wall = parts.wall }
        }
        // Never a date from a clock far ahead (applied stamps are at most an hour ahead; a local clock poisoned
        // before that rule existed may be further): such a recipe keeps the date it has.
        guard wall > 0, wall <= SyncState.nowMilliseconds() + 2 * SyncValidation.maxClockAheadMilliseconds else { return nil }
        return Date(timeIntervalSince1970: Double(wall) / 1_000)
    }

    static func nextSeq(in db: Database) throws -> Int {
        (try Int.fetchOne(db.cachedStatement(sql: "SELECT MAX(seq) FROM sync_records")) ?? 0) + 1
    }

    static func storedRecord(_ kind: SyncKind, _ id: String, in db: Database) throws -> SyncRecord? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT seq, body FROM sync_records WHERE kind = ? AND id = ?"),
                                         arguments: [kind.rawValue, id]) else { return nil }
        return try decode(row["body"], seq: row["seq"])
    }

    static func decode(_ body: String, seq: Int) throws -> SyncRecord {
        var record = try decoder.decode(SyncRecord.self, from: Data(body.utf8))
        record.seq = seq
        return record
    }

    static func save(_ record: SyncRecord, source: String, in db: Database) throws {
        let encoded = try encoder.encode(record)
        let body = String(decoding: encoded, as: UTF8.self)
        let live = record.isLive
        let open = live ? openConflicts(in: record.fields).count : 0
        try db.cachedStatement(sql: """
            INSERT INTO sync_records (kind, id, seq, source, live, body, conflicts) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (kind, id) DO UPDATE SET seq = excluded.seq, source = excluded.source, live = excluded.live,
                body = excluded.body, conflicts = excluded.conflicts
            """).execute(arguments: [record.kind.rawValue, record.id, record.seq, source, live, body, open])
        try FeedMark.given(record.seq, encoded, in: db)
    }

    /// The record's open conflicts: kept losing values (`conflict:<id>` whose state is open) and, on a copy, `conflictOf`.
    /// A value kept as lost that its field holds now is none: three or more concurrent writes, two of one value, keep it
    /// where the other write came between them and not where the two met first (the order a replica took them in), and
    /// nothing of it is lost while the field holds it.
    static func openConflicts(in fields: [String: JSONValue]) -> [String] {
        fields.compactMap { name, value in
            if name == SyncRecord.conflictOfField { return value == .null ? nil : name }
            guard name.hasPrefix(SyncRecord.conflictPrefix), let kept = value.object, kept["state"] == .string("open") else { return nil }
            if let field = kept["field"]?.string, let lost = kept["value"], fields[field] == lost { return nil }
            return name
        }.sorted()
    }

    static func encodeBody(_ record: SyncRecord) throws -> String {
        String(decoding: try encoder.encode(record), as: UTF8.self)
    }

    /// The field of `kind` that names another record, and the table that record lives in.
    static func referenceField(_ kind: SyncKind) -> (field: String, table: String)? {
        switch kind {
        case .recipe: ("bookID", "books")
        case .cookLog: ("recipeID", "recipes")
        case .book, .ingredient: nil
        }
    }

    static func exists(_ id: String, in table: String, _ db: Database) throws -> Bool {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM \(table) WHERE id = ?"), arguments: [id]) != nil
    }

    /// Remembers that the row of `kind`/`id` names `target`, which is not here: it is linked when `target` (re)appears.
    static func remember(dangling kind: SyncKind, _ id: String, target: String, in db: Database) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO sync_dangling (kind, id, target) VALUES (?, ?, ?)")
            .execute(arguments: [kind.rawValue, id, target])
    }
}
