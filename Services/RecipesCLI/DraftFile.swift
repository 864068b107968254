import Foundation
import RecipeMigration
import RecipeProtocol

/// Reads a recipe file: a RecipeDraft (docs/PROTOCOL.md), or a schema.org Recipe in JSON-LD
/// (read by the same importer the worker uses for web pages).
enum DraftFile {
    static func decode(_ data: Data, source: String) throws -> RecipeDraft {
        do {
            return try RecipeFiles.draft(data, source: source, checksFields: true)
        } catch {
            throw CLIError(error.message)
        }
    }
}
