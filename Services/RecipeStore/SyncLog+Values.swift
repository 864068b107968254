import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

/// A record's fields as the tables hold them now: what `capture` compares with the last recorded version.
extension SyncLog {
    /// The record's current field values from the tables, or `nil` when it does not exist.
    /// `stored` is the record's last recorded version: photos and keywords keep the positions they had there
    /// while their order is unchanged, so applying a merged order is not taken for a new edit.
    static func currentValues(_ kind: SyncKind, _ id: String, stored: [String: SyncField], in db: Database) throws -> [String: JSONValue]? {
        var fromDraft = false
        return try currentValues(kind, id, stored: stored, fromDraft: &fromDraft, in: db)
    }

    /// `fromDraft`: a recipe's values are those of the draft its write just validated and wrote (its read-back).
    static func currentValues(_ kind: SyncKind, _ id: String, stored: [String: SyncField], fromDraft: inout Bool,
                              in db: Database) throws -> [String: JSONValue]? {
        fromDraft = false
        switch kind {
        case .recipe:
            if let readBack = RecipeStore.ReadBack.take(id, in: db) {
                var values = recipeValues(readBack.recipe, stored: stored)
                values["createdAt"] = JSONValue(readBack.createdAt)
                fromDraft = true
                return values
            }
            return try db.firstRow(RecipeStore.selectRecipe, [id]) { row in
                var values = recipeValues(try RecipeStore.assemble(row, in: db), stored: stored)
                values["createdAt"] = JSONValue(row.storedText(RecipeStore.FixedColumn.createdAt.rawValue))
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
        values["instructions"] = distinctStepIDs(values["instructions"], besides: values["ingredients"])
        return values
    }

    /// Ingredients and steps are merged as two fields, so a line moved from one list to the other (keeping its id)
    /// on one replica while the other list was edited on another can end in both. Each version was valid; their
    /// merge must be storable too, and the same on every replica: the step takes an id made from the one it shares.
    static func distinctStepIDs(_ steps: JSONValue?, besides ingredients: JSONValue?) -> JSONValue? {
        guard let list = steps?.array, let lines = ingredients?.array, !list.isEmpty, !lines.isEmpty else { return steps }
        let taken = Set(lines.compactMap { $0.object?["id"]?.string })
        guard list.contains(where: { $0.object?["id"]?.string.map(taken.contains) == true }) else { return steps }
        return .array(list.map { step in
            guard var object = step.object, let id = object["id"]?.string, taken.contains(id) else { return step }
            object["id"] = .string(DerivedID.uuid("step|\(id)").uuidString)
            return .object(object)
        })
    }
}
