import Crypto
import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

/// Turning committed table changes into versioned feed entries, and feed entries back into tables.
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
    static func capture(in db: Database) throws {
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
            var states = stored?.states ?? [:]
            var changed = false
            if kind == .recipe, states["photos"] != nil || states["keywords"] != nil {
                // Whole-list photos and keywords of an older version give way to set elements.
                states.removeValue(forKey: "photos")
                states.removeValue(forKey: "keywords")
                changed = true
            }
            if var values = try currentValues(kind, id, stored: states, in: db) {
                // A reference whose target is gone (deleted, or not arrived yet) reads NULL in the table but stays
                // the record's value: the unlinking was the database's doing, not a person's edit.
                if let (field, table) = referenceField(kind) {
                    if values[field] == .null, let kept = states[field]?.value.string, try !exists(kept, in: table, db) {
                        values[field] = .string(kept)
                        try remember(dangling: kind, id, target: kept, in: db)
                    } else {
                        // Linked, or set to something else: nothing waits to be relinked any more.
                        try db.cachedStatement(sql: "DELETE FROM sync_dangling WHERE kind = ? AND id = ?").execute(arguments: [kind.rawValue, id])
                    }
                }
                let genesis = stored == nil && SampleIdentity.isSample(kind, id: id, values: values)
                for (name, value) in values where states[name]?.value != value {
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
                try save(SyncRecord(kind: kind, id: id, seq: seq, states: states), source: state.replica, in: db)
                seq += 1
            }
            // A recipe's modification time is its newest version's, on every replica alike (a write that
            // changed nothing leaves it as it was).
            // (A new recipe's row already says so: it is not written again.)
            if kind == .recipe, let modified = modifiedAt(states) {
                try db.cachedStatement(sql: "UPDATE recipes SET updatedAt = ?1 WHERE id = ?2 AND updatedAt IS NOT ?1")
                    .execute(arguments: [modified, id])
            }
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
        let body = String(decoding: try encoder.encode(record), as: UTF8.self)
        let live = record.isLive
        let open = live ? openConflicts(in: record.fields).count : 0
        try db.cachedStatement(sql: """
            INSERT INTO sync_records (kind, id, seq, source, live, body, conflicts) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (kind, id) DO UPDATE SET seq = excluded.seq, source = excluded.source, live = excluded.live,
                body = excluded.body, conflicts = excluded.conflicts
            """).execute(arguments: [record.kind.rawValue, record.id, record.seq, source, live, body, open])
    }

    /// The record's open conflicts: kept losing values (`conflict:<id>` whose state is open) and, on a copy, `conflictOf`.
    static func openConflicts(in fields: [String: JSONValue]) -> [String] {
        fields.compactMap { name, value in
            if name == SyncRecord.conflictOfField { return value == .null ? nil : name }
            guard name.hasPrefix(SyncRecord.conflictPrefix), value.object?["state"] == .string("open") else { return nil }
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

    // MARK: Values as synced

    /// The record's current field values from the tables, or `nil` when it does not exist.
    /// `stored` is the record's last recorded version: photos and keywords keep the positions they had there
    /// while their order is unchanged, so applying a merged order is not taken for a new edit.
    static func currentValues(_ kind: SyncKind, _ id: String, stored: [String: SyncField], in db: Database) throws -> [String: JSONValue]? {
        switch kind {
        case .recipe:
            return try db.firstRow(RecipeStore.selectRecipe, [id]) { row in
                var values = recipeValues(try RecipeStore.assemble(row, in: db), stored: stored)
                values["createdAt"] = JSONValue(row.storedText(RecipeStore.createdAtColumn))
                return values
            }
        case .book:
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM books WHERE id = ?"), arguments: [id]) else { return nil }
            return ["title": .string(row["title"]), "author": JSONValue(row["author"] as String?),
                    "createdAt": SyncDates.stored(row, "createdAt")]
        case .ingredient:
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM ingredients WHERE name = ?"), arguments: [id]) else { return nil }
            let aliases = try String.fetchAll(db.cachedStatement(sql: "SELECT alias FROM ingredient_aliases WHERE ingredientId = ? ORDER BY alias"),
                                              arguments: [row["id"] as String])
            return ["id": .string(row["id"]), "category": JSONValue(row["category"] as String?),
                    "aliases": .array(aliases.map(JSONValue.string)), "createdAt": SyncDates.stored(row, "createdAt")]
        case .cookLog:
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM cook_log WHERE id = ?"), arguments: [id]) else { return nil }
            return ["recipeID": JSONValue(row["recipeId"] as String?), "recipeName": .string(row["recipeName"]),
                    "cookedAt": SyncDates.stored(row, "cookedAt"), "rating": JSONValue(row["rating"] as Int?),
                    "note": JSONValue(row["note"] as String?), "servings": JSONValue(row["servings"] as Double?),
                    "createdAt": SyncDates.stored(row, "createdAt")]
        }
    }

    static func recipeValues(_ recipe: Recipe, stored: [String: SyncField]) -> [String: JSONValue] {
        var values: [String: JSONValue] = [
            "name": .string(recipe.name),
            "ingredients": .array(recipe.ingredients.map { .object(["id": .string($0.id.uuidString), "text": .string($0.text)]) }),
            "instructions": .array(recipe.instructions.map { step in
                // A title only when there is one: steps without stay the values they were before titles existed.
                var value: [String: JSONValue] = ["id": .string(step.id.uuidString), "text": .string(step.text), "section": JSONValue(step.section)]
                if let title = step.title { value["title"] = .string(title) }
                return .object(value)
            }),
            "servings": JSONValue(recipe.servings), "sourceType": .string(recipe.sourceType.rawValue),
            "bookID": JSONValue(recipe.bookID?.uuidString), "sourcePageNumber": JSONValue(recipe.sourcePageNumber),
            "isFavorite": .bool(recipe.isFavorite), "rating": JSONValue(recipe.rating), "origin": .string(recipe.origin.rawValue),
        ]
        for field in RecipeTextField.all { values[field.name] = JSONValue(recipe[keyPath: field.recipe]) }
        let photoKeys = recipe.photos.map { SyncRecord.photoPrefix + $0.id.uuidString }
        let photoPositions = ElementOrder.positions(current: photoKeys, stored: stored, prefix: SyncRecord.photoPrefix)
        for (key, photo) in zip(photoKeys, recipe.photos) {
            values[key] = .object(["sha256": .string(photo.sha256), "byteCount": JSONValue(photo.byteCount),
                                   "mediaType": .string(photo.mediaType), "position": .number(photoPositions[key] ?? 0)])
        }
        var seen = Set<String>()
        let keywordKeys = recipe.keywords.map { SyncRecord.keywordPrefix + $0 }.filter { seen.insert($0).inserted }
        let keywordPositions = ElementOrder.positions(current: keywordKeys, stored: stored, prefix: SyncRecord.keywordPrefix)
        for key in keywordKeys { values[key] = .number(keywordPositions[key] ?? 0) }
        return values
    }

    /// A recipe's values as the tables hold them: set elements gathered into ordered
    /// `photos` and `keywords` lists, sync bookkeeping left out.
    static func assembled(_ states: [String: SyncField]) -> [String: JSONValue] {
        var values: [String: JSONValue] = [:]
        for (name, field) in states where !SyncRecord.isElementField(name) && !SyncRecord.isRecordOnlyField(name) {
            values[name] = field.value
        }
        values["photos"] = .array(ElementOrder.ordered(states, prefix: SyncRecord.photoPrefix).map { key, value in
            var photo = value.object ?? [:]
            photo["id"] = .string(String(key.dropFirst(SyncRecord.photoPrefix.count)))
            photo.removeValue(forKey: "position")
            return .object(photo)
        })
        values["keywords"] = .array(ElementOrder.ordered(states, prefix: SyncRecord.keywordPrefix).map { key, _ in
            .string(String(key.dropFirst(SyncRecord.keywordPrefix.count)))
        })
        return values
    }

    // MARK: Writing merged values to the tables

    /// Makes the tables hold `values` (or not hold the record when it is not live).
    static func writeTables(_ kind: SyncKind, _ id: String, states: [String: SyncField],
                            photos: PhotoBlobs, in db: Database) throws {
        let live = SyncMerge.isLive(states)
        let values = kind == .recipe ? assembled(states) : states.mapValues(\.value)
        try db.cachedStatement(sql: "DELETE FROM sync_dangling WHERE kind = ? AND id = ?").execute(arguments: [kind.rawValue, id])
        switch kind {
        case .recipe: try writeRecipe(id, values: values, live: live, modified: modifiedAt(states), photos: photos, in: db)
        case .book:
            guard live else {
                try db.execute(sql: "DELETE FROM books WHERE id = ?", arguments: [id])
                return
            }
            try db.execute(sql: """
                INSERT INTO books (id, title, author, createdAt, updatedAt) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET title = excluded.title, author = excluded.author, createdAt = excluded.createdAt,
                    updatedAt = excluded.updatedAt
                """, arguments: [id, values["title"]?.string ?? "Untitled", values["author"]?.string,
                                 SyncDates.text(values["createdAt"]), RecipeStore.now()])
            try relink(target: id, table: "recipes", column: "bookId", kind: .recipe, in: db)
        case .ingredient:
            let rowID = values["id"]?.string ?? UUID.timeOrdered().uuidString
            try db.execute(sql: "DELETE FROM ingredients WHERE name = ? OR id = ?", arguments: [id, rowID])
            guard live else { return }
            try db.execute(sql: "INSERT INTO ingredients (id, name, category, createdAt, updatedAt) VALUES (?, ?, ?, ?, ?)",
                           arguments: [rowID, id, values["category"]?.string, SyncDates.text(values["createdAt"]), RecipeStore.now()])
            for alias in Set((values["aliases"]?.array ?? []).compactMap(\.string)) {
                try db.execute(sql: "INSERT INTO ingredient_aliases (ingredientId, alias) VALUES (?, ?)", arguments: [rowID, alias])
            }
        case .cookLog:
            guard live else {
                try db.execute(sql: "DELETE FROM cook_log WHERE id = ?", arguments: [id])
                return
            }
            let recipeID = try reference(values["recipeID"]?.string, table: "recipes", from: .cookLog, id, in: db)
            try db.execute(sql: """
                INSERT INTO cook_log (id, recipeId, recipeName, cookedAt, rating, note, servings, createdAt) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET recipeId = excluded.recipeId, recipeName = excluded.recipeName, cookedAt = excluded.cookedAt,
                    rating = excluded.rating, note = excluded.note, servings = excluded.servings, createdAt = excluded.createdAt
                """, arguments: [id, recipeID, values["recipeName"]?.string ?? "", SyncDates.text(values["cookedAt"]),
                                 values["rating"]?.int, values["note"]?.string, values["servings"]?.number, SyncDates.text(values["createdAt"])])
        }
    }

    private static func writeRecipe(_ id: String, values: [String: JSONValue], live: Bool, modified: Date?,
                                    photos: PhotoBlobs, in db: Database) throws {
        guard let uuid = UUID(uuidString: id) else { throw ServiceError(.invalidArgument, "recipe id \"\(id)\" is not a UUID") }
        let exists = try Row.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM recipes WHERE id = ?"), arguments: [id]) != nil
        guard live else {
            if exists {
                try SearchIndex.remove(recipeID: id, in: db)
                try db.execute(sql: "DELETE FROM recipes WHERE id = ?", arguments: [id])
            }
            return
        }
        let photoList = (values["photos"]?.array ?? []).compactMap(\.object)
        for photo in photoList {
            let hash = photo["sha256"]?.string ?? ""
            guard photos.contains(hash) else {
                throw ServiceError(.missingPhoto, "photo \(hash) of recipe \(id) is not stored here; send it with sync.putPhoto before applying the record")
            }
        }
        var draft = RecipeDraft(name: values["name"]?.string ?? "Untitled")
        draft.ingredients = (values["ingredients"]?.array ?? []).compactMap(\.object).map {
            RecipeDraft.Line(id: $0["id"]?.string.flatMap(UUID.init(uuidString:)), text: $0["text"]?.string ?? "")
        }
        draft.instructions = (values["instructions"]?.array ?? []).compactMap(\.object).map {
            RecipeDraft.Step(id: $0["id"]?.string.flatMap(UUID.init(uuidString:)), text: $0["text"]?.string ?? "", section: $0["section"]?.string,
                             title: $0["title"]?.string)
        }
        draft.servings = values["servings"]?.number
        draft.keywords = (values["keywords"]?.array ?? []).compactMap(\.string)
        for field in RecipeTextField.all { draft[keyPath: field.draft] = values[field.name]?.string }
        draft.sourceType = values["sourceType"]?.string.flatMap(SourceType.init(rawValue:)) ?? .manual
        draft.sourcePageNumber = values["sourcePageNumber"]?.int
        draft.isFavorite = values["isFavorite"]?.bool ?? false
        draft.rating = values["rating"]?.int ?? 0
        let origin = values["origin"]?.string.flatMap(RecipeOrigin.init(rawValue:)) ?? .custom
        let createdAt = SyncDates.text(values["createdAt"])
        let updatedAt = modified.map(\.databaseValue) ?? createdAt.databaseValue
        draft.bookID = try reference(values["bookID"]?.string, table: "books", from: .recipe, id, in: db).flatMap(UUID.init(uuidString:))
        if exists {
            try RecipeStore.writeFields(of: draft, to: uuid, in: db)
            try db.execute(sql: "UPDATE recipes SET origin = ?, createdAt = ?, updatedAt = ?, version = version + 1 WHERE id = ?",
                           arguments: [origin.rawValue, createdAt, updatedAt, id])
        } else {
            try RecipeStore.writeFields(of: draft, to: uuid, newRow: .init(origin: origin, createdAt: createdAt, updatedAt: updatedAt), in: db)
        }
        try db.execute(sql: "DELETE FROM recipe_photos WHERE recipeId = ?", arguments: [id])
        for (position, photo) in photoList.enumerated() {
            try db.cachedStatement(sql: """
                INSERT INTO recipe_photos (id, recipeId, position, sha256, byteCount, mediaType) VALUES (?, ?, ?, ?, ?, ?)
                """).execute(arguments: [photo["id"]?.string ?? UUID.timeOrdered().uuidString, id, position, photo["sha256"]?.string ?? "",
                                         photo["byteCount"]?.int ?? 0, photo["mediaType"]?.string ?? "image/jpeg"])
        }
        try relink(target: id, table: "cook_log", column: "recipeId", kind: .cookLog, in: db)
    }

    /// `target` when the row it names exists here; otherwise `nil`, remembered as dangling until it arrives.
    private static func reference(_ target: String?, table: String, from kind: SyncKind, _ id: String, in db: Database) throws -> String? {
        guard let target else { return nil }
        if try exists(target, in: table, db) { return target }
        try remember(dangling: kind, id, target: target, in: db)
        return nil
    }

    /// Points rows that waited for `target` at it now that it is here.
    private static func relink(target: String, table: String, column: String, kind: SyncKind, in db: Database) throws {
        let waiting = try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM sync_dangling WHERE target = ? AND kind = ?"),
                                          arguments: [target, kind.rawValue])
        let field = referenceField(kind)?.field ?? ""
        for id in waiting {
            // Only a row whose record still names the target is linked to it.
            guard try storedRecord(kind, id, in: db)?.fields[field]?.string ?? target == target else {
                try db.execute(sql: "DELETE FROM sync_dangling WHERE kind = ? AND id = ?", arguments: [kind.rawValue, id])
                continue
            }
            try db.execute(sql: "UPDATE \(table) SET \(column) = ? WHERE id = ?", arguments: [target, id])
            try db.execute(sql: "DELETE FROM sync_dangling WHERE kind = ? AND id = ?", arguments: [kind.rawValue, id])
            try db.execute(sql: "DELETE FROM sync_pending WHERE kind = ? AND id = ?", arguments: [kind.rawValue, id])
        }
    }
}
