import Crypto
import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

/// Dates inside synced values travel as the database holds them (`2026-01-31 18:05:00.250`, UTC),
/// so a date read on one replica and written on another is the same text, not a rounded copy.
enum SyncDates {
    static func stored(_ row: Row, _ column: String) -> JSONValue {
        JSONValue(row[column] as String?)
    }
    /// The stored text (falling back to the epoch for a record without the date).
    static func text(_ value: JSONValue?) -> String {
        value?.string ?? "1970-01-01 00:00:00.000"
    }
}

/// The sample collection carries the same version on every replica, so it never conflicts.
enum SampleIdentity {
    /// What a sample record refers to (a starter's book), as the samples declare it.
    static func reference(_ kind: SyncKind, id: String) -> String? {
        guard kind == .recipe else { return nil }
        return SampleData.recipes.first { SampleData.recipeID($0.number).uuidString == id }?.draft.bookID?.uuidString
    }

    /// Whether a record seen for the first time is one of the samples as `loadSamples` writes it: a sample's id
    /// *and* its name (a book's title). The id alone said so, and a person's own book, recipe or catalogue entry
    /// given a sample's id (a client chooses ids) was written with the samples' version, which every other write
    /// replaces: its edits were lost to older ones made elsewhere.
    static func isSample(_ kind: SyncKind, id: String, values: [String: JSONValue]) -> Bool {
        switch kind {
        case .recipe:
            values["origin"] == .string(RecipeOrigin.starter.rawValue) && starterNames[id] != nil && values["name"]?.string == starterNames[id]
        case .book: bookTitles[id] != nil && values["title"]?.string == bookTitles[id]
        case .ingredient: values["id"]?.string.flatMap { catalogueNames[$0] } == id
        case .cookLog: false
        }
    }

    /// Each sample's id and name as stored (composed), worked out once: every record's first capture asks.
    private static let starterNames = Dictionary(uniqueKeysWithValues: SampleData.recipes.map {
        (SampleData.recipeID($0.number).uuidString, $0.draft.name.composed)
    })
    private static let bookTitles = Dictionary(uniqueKeysWithValues: SampleData.books.map { ($0.id.uuidString, $0.title.composed) })
    private static let catalogueNames = Dictionary(uniqueKeysWithValues: SampleData.catalogue.indices.map {
        (SampleData.id("5A3F", $0 + 1).uuidString, SampleData.catalogue[$0].name.composed)
    })
}

/// Ids made from text: the same conflict gives the same copy on every replica.
enum DerivedID {
    static func uuid(_ text: String) -> UUID {
        var bytes = Array(SHA256.hash(data: Data(text.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50 // version 5 layout (name-based)
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
