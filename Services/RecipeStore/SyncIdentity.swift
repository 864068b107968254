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

    static func isSample(_ kind: SyncKind, id: String, values: [String: JSONValue]) -> Bool {
        let key = kind == .ingredient ? (values["id"]?.string ?? "") : id
        guard key.count == 36, key.dropFirst(8).hasPrefix("-0000-4000-8000-") else { return false }
        switch kind {
        case .recipe: return key.hasPrefix("5A3C") && values["origin"] == .string(RecipeOrigin.starter.rawValue)
        case .book: return key.hasPrefix("5A3B")
        case .ingredient: return key.hasPrefix("5A3F")
        case .cookLog: return false
        }
    }
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
