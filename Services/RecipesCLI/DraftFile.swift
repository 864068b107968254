import Foundation
import RecipeImport
import RecipeProtocol

/// Reads a recipe file: a RecipeDraft (docs/PROTOCOL.md), or a schema.org Recipe in JSON-LD
/// (read by the same importer the worker uses for web pages).
enum DraftFile {
    static func decode(_ data: Data, source: String) throws -> RecipeDraft {
        guard let object = try? JSONSerialization.jsonObject(with: data) else {
            throw CLIError("\(source) is not JSON; give a recipe draft or a schema.org Recipe in JSON-LD")
        }
        if let imported = RecipeExtractor.extract(json: object, url: nil) {
            var draft = imported.draft
            draft.origin = .custom // added by hand from a file, not fetched by the worker
            return draft
        }
        do {
            return try WireCodec.makeDecoder().decode(RecipeDraft.self, from: data)
        } catch let error as DecodingError {
            throw CLIError("\(source) is not a recipe draft: \(describe(error))")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, _): "\"\(key.stringValue)\" is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            "\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
        @unknown default: "it could not be read"
        }
    }
}
