import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

/// Merged fields written back to the tables (and rows that named a record not here yet, linked once it is).
extension SyncLog {
    /// The id made from a catalogue entry's name: where an entry whose id another holds goes (`settleCatalogue`).
    static func derivedIngredientID(_ name: String) -> String { DerivedID.uuid("ingredient|\(name)").uuidString }

    /// Puts every catalogue entry at the row id the merged records give it, whatever order they arrived in: one id
    /// two or more entries' records claim is held by the name that sorts first; each other claimant takes the id made
    /// from its name (or, when a record claims that one too, the next made from its name and a count) — so two replicas
    /// holding the same records hold the same ids. A move is the merge's doing, not a person's edit: no new version
    /// (the record keeps the id it was given). Run once after every write of merged catalogue records
    /// (`writeTables`), over the whole catalogue: what an entry leaving an id changes reaches entries it never named.
    static func settleCatalogue(in db: Database) throws {
        let (placed, target) = try cataloguePlacement(in: db)
        let moving = placed.filter { name, id in target[name].map { $0 != id } ?? false }.keys.sorted()
        guard !moving.isEmpty else { return }
        let pending = Set(try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM sync_pending WHERE kind = 'ingredient'")))
        // Out of the way first (an entry may move into the id another leaves), then into place; aliases follow.
        var aliases: [String: [String]] = [:]
        for name in moving {
            let id = placed[name]!
            aliases[name] = try String.fetchAll(db.cachedStatement(sql: "SELECT alias FROM ingredient_aliases WHERE ingredientId = ?"), arguments: [id])
            try db.cachedStatement(sql: "DELETE FROM ingredient_aliases WHERE ingredientId = ?").execute(arguments: [id])
            try db.cachedStatement(sql: "UPDATE ingredients SET id = ? WHERE id = ?").execute(arguments: ["settling|\(name)", id])
        }
        for name in moving {
            let id = target[name]!
            try db.cachedStatement(sql: "UPDATE ingredients SET id = ? WHERE id = ?").execute(arguments: [id, "settling|\(name)"])
            for alias in aliases[name] ?? [] {
                try db.cachedStatement(sql: "INSERT INTO ingredient_aliases (ingredientId, alias) VALUES (?, ?)").execute(arguments: [id, alias])
            }
            // Not an edit to capture (one pending before, a person's, still is).
            if !pending.contains(name) {
                try db.cachedStatement(sql: "DELETE FROM sync_pending WHERE kind = 'ingredient' AND id = ?").execute(arguments: [name])
            }
        }
    }

    /// Each catalogue entry's row id here (name → id), and the one the records give it (`catalogueRowIDs`).
    static func cataloguePlacement(in db: Database) throws -> (placed: [String: String], target: [String: String]) {
        var wanted: [String: String] = [:] // name → the id its record claims
        for row in try Row.fetchAll(db.cachedStatement(sql: """
            SELECT id, CASE json_type(body, '$.fields.id') WHEN 'text' THEN json_extract(body, '$.fields.id') END AS wanted
            FROM sync_records WHERE kind = 'ingredient' AND live
            """)) {
            let name: String = row["id"]
            wanted[name] = (row["wanted"] as String?) ?? derivedIngredientID(name)
        }
        var placed: [String: String] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT name, id FROM ingredients")) {
            let name: String = row["name"]
            placed[name] = row["id"]
            // A row without a live record (none is left so by a merge) claims the id it has.
            if wanted[name] == nil { wanted[name] = row["id"] }
        }
        return (placed, catalogueRowIDs(wanted))
    }

    /// `settleCatalogue` once for the database, at the first start of a release with sync rules 3 (an earlier one placed
    /// entries by the order their records arrived in); later starts read one row of `sync_state`, not the feed.
    static func settleCatalogueOnce(in db: Database) throws {
        let key = "catalogueSettled"
        guard try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM sync_state WHERE key = ?"), arguments: [key]) == nil else { return }
        try settleCatalogue(in: db)
        try db.cachedStatement(sql: "INSERT INTO sync_state (key, value) VALUES (?, ?)").execute(arguments: [key, String(SyncRules.current)])
    }

    /// The row id of each entry, from the id each one's record claims (name → id): a function of the claims alone.
    static func catalogueRowIDs(_ wanted: [String: String]) -> [String: String] {
        var claimants: [String: [String]] = [:]
        for (name, id) in wanted { claimants[id, default: []].append(name) }
        var target: [String: String] = [:]
        var displaced: [String] = []
        for (id, names) in claimants {
            let sorted = names.sorted()
            target[sorted[0]] = id
            displaced += sorted.dropFirst()
        }
        var taken = Set(claimants.keys)
        for name in displaced.sorted() {
            var id = derivedIngredientID(name)
            var count = 0
            while taken.contains(id) {
                count += 1
                id = DerivedID.uuid("ingredient-moved|\(count)|\(name)").uuidString
            }
            taken.insert(id)
            target[name] = id
        }
        return target
    }

    /// After a recipe's record was stamped again (`restartClockIfAhead`, `SyncSeen.takeIncarnation`): photos and keywords
    /// at one position show by their stamps, so where the new stamps change that order the tables take it, as every
    /// replica holding the record shows it. Left as it was, the next capture of the recipe read the tables' order as an
    /// edit of this replica's and wrote the elements again — a write no person made, which brought a recipe deleted
    /// elsewhere back (seed 14578434909571851891). The recipe's version stays: a person's edit of the version they read
    /// is no conflict with a re-dating (the clock restart runs in that edit's own transaction, before its check).
    static func showOrder(of id: String, was before: [String: SyncField], now states: [String: SyncField], in db: Database) throws {
        guard [SyncRecord.photoPrefix, SyncRecord.keywordPrefix].contains(where: { prefix in
            ElementOrder.ordered(before, prefix: prefix).map(\.key) != ElementOrder.ordered(states, prefix: prefix).map(\.key)
        }) else { return }
        // A change of this transaction's own still to be captured stays marked.
        let pending = try Row.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM sync_pending WHERE kind = 'recipe' AND id = ?"), arguments: [id]) != nil
        try writeTables(.recipe, id, states: states, photos: nil, newVersion: false, in: db)
        if !pending {
            try db.cachedStatement(sql: "DELETE FROM sync_pending WHERE kind = 'recipe' AND id = ?").execute(arguments: [id])
        }
    }

    /// Makes the tables hold `values` (or not hold the record when it is not live).
    /// `photos`: the blobs a recipe's new photos must be among (nil: only photos this replica's recipes already name);
    /// `unavailable`: blobs taken without their bytes all the same (no replica could send them: they are lost here too).
    /// `newVersion`: whether a recipe's `version` (what a person's edit names as the one it read) moves on; not for a
    /// record only stamped again, which no one edited.
    static func writeTables(_ kind: SyncKind, _ id: String, states: [String: SyncField],
                            photos: PhotoBlobs?, unavailable: Set<String> = [], newVersion: Bool = true, in db: Database) throws {
        let live = SyncMerge.isLive(states)
        let values = kind == .recipe ? assembled(states) : states.mapValues(\.value)
        try db.cachedStatement(sql: "DELETE FROM sync_dangling WHERE kind = ? AND id = ?").execute(arguments: [kind.rawValue, id])
        switch kind {
        case .recipe: try writeRecipe(id, values: values, live: live, modified: modifiedAt(states), photos: photos, unavailable: unavailable,
                                      newVersion: newVersion, in: db)
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
            // The name is the entry's key across replicas. Deleting by the row id as well removed another entry that
            // held it (given the same id on two replicas, or by a replica that reused it) while its record stayed.
            try db.cachedStatement(sql: "DELETE FROM ingredients WHERE name = ?").execute(arguments: [id])
            guard live else { return }
            // Where its record says, when free; `settleCatalogue`, run after, puts it (and every entry) where the records say.
            let wanted = values["id"]?.string ?? Self.derivedIngredientID(id)
            let rowID = try RecipeStore.ingredientName(rowID: wanted, in: db) == nil ? wanted : UUID.timeOrdered().uuidString
            try db.execute(sql: "INSERT INTO ingredients (id, name, category, createdAt, updatedAt) VALUES (?, ?, ?, ?, ?)",
                           arguments: [rowID, id, values["category"]?.string, SyncDates.text(values["createdAt"]), RecipeStore.now()])
            for alias in Set((values["aliases"]?.array ?? []).compactMap(\.string)) {
                try db.cachedStatement(sql: "INSERT INTO ingredient_aliases (ingredientId, alias) VALUES (?, ?)").execute(arguments: [rowID, alias])
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
                                    photos: PhotoBlobs?, unavailable: Set<String>, newVersion: Bool, in db: Database) throws {
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
            // A blob this replica's recipes already name but lost from its disk keeps its rows (a person resolving a
            // conflict here is not held up by it; the next sync brings the blob back). Only a new one must be here.
            guard try photos?.contains(hash) == true || unavailable.contains(hash) || RecipeStore.recipesName(photo: hash, in: db) else {
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
            try db.execute(sql: "UPDATE recipes SET origin = ?, createdAt = ?, updatedAt = ?, version = version + ? WHERE id = ?",
                           arguments: [origin.rawValue, createdAt, updatedAt, newVersion ? 1 : 0, id])
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

    /// Points the rows that refer to a `kind` record (cook-log entries to a recipe, recipes to a book) and waited for
    /// it at `id`, now that its row is here.
    static func relinkWaiting(for kind: SyncKind, _ id: String, in db: Database) throws {
        switch kind {
        case .recipe: try relink(target: id, table: "cook_log", column: "recipeId", kind: .cookLog, in: db)
        case .book: try relink(target: id, table: "recipes", column: "bookId", kind: .recipe, in: db)
        case .ingredient, .cookLog: break
        }
    }

    /// Points rows that waited for `target` at it now that it is here: those remembered as dangling, and those the
    /// database unlinked earlier in this same transaction (`target` removed by one record of a sync, and brought back by
    /// another before the transaction's capture could remember them as dangling).
    private static func relink(target: String, table: String, column: String, kind: SyncKind, in db: Database) throws {
        let field = referenceField(kind)?.field ?? ""
        let dangling = try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM sync_dangling WHERE target = ? AND kind = ?"),
                                           arguments: [target, kind.rawValue])
        // Unlinked in this transaction: changed rows are marked pending; only those whose record names `target` are its.
        let unlinkedHere = try String.fetchAll(db.cachedStatement(sql: """
            SELECT t.id FROM sync_pending p JOIN \(table) t ON t.id = p.id WHERE p.kind = ? AND t.\(column) IS NULL
            """), arguments: [kind.rawValue])
        for id in dangling {
            // Only a row whose record still names the target (or has no record yet) is linked to it.
            guard try storedRecord(kind, id, in: db)?.fields[field]?.string ?? target == target else {
                try db.cachedStatement(sql: "DELETE FROM sync_dangling WHERE kind = ? AND id = ?").execute(arguments: [kind.rawValue, id])
                continue
            }
            try link(id)
        }
        let linked = Set(dangling)
        for id in unlinkedHere where !linked.contains(id) {
            guard try storedRecord(kind, id, in: db)?.fields[field]?.string == target else { continue }
            try link(id)
        }
        func link(_ id: String) throws {
            try db.execute(sql: "UPDATE \(table) SET \(column) = ? WHERE id = ?", arguments: [target, id])
            try db.execute(sql: "DELETE FROM sync_dangling WHERE kind = ? AND id = ?", arguments: [kind.rawValue, id])
            try db.execute(sql: "DELETE FROM sync_pending WHERE kind = ? AND id = ?", arguments: [kind.rawValue, id])
        }
    }
}
