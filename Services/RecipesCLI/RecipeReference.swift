import Foundation
import Messaging
import RecipeProtocol

/// Finds the recipe a person means: a full id, the short id a table shows, or its name.
enum RecipeReference {
    static func resolve(_ reference: String, using client: MessageClient) async throws -> UUID {
        let trimmed = reference.trimmingCharacters(in: .whitespaces)
        if let id = UUID(uuidString: trimmed) { return id }
        if (4...35).contains(trimmed.count), trimmed.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
            let page = try await client.call(RecipeOps.List.self, RecipeListQuery(idPrefix: trimmed, limit: 10))
            if page.recipes.count == 1 { return page.recipes[0].id }
            if page.recipes.count > 1 {
                throw CLIError("\"\(trimmed)\" is the start of \(page.recipes.count) recipe ids; give more of it", status: ExitStatus.refused)
            }
        }
        let hits = try await client.call(RecipeOps.Search.self, .init(text: trimmed, limit: 20)).hits.map(\.recipe)
        let exact = hits.filter { $0.name.caseInsensitiveCompare(trimmed) == .orderedSame }
        if exact.count == 1 { return exact[0].id }
        let candidates = exact.isEmpty ? hits : exact
        if candidates.count == 1 { return candidates[0].id }
        if candidates.isEmpty {
            throw CLIError("no recipe is called \"\(trimmed)\" and no recipe id starts with it; try `recipes search`", status: ExitStatus.notFound)
        }
        let names = candidates.prefix(5).map { "\(Output.shortID($0.id)) \($0.name)" }.joined(separator: "; ")
        throw CLIError("\"\(trimmed)\" could be \(candidates.count) recipes (\(names)); use an id", status: ExitStatus.refused)
    }
}

/// "15m", "1h30m", "90" (minutes) or ISO 8601 ("PT15M") → ISO 8601.
func isoDuration(_ text: String) throws -> String {
    let value = text.trimmingCharacters(in: .whitespaces).lowercased()
    if value.hasPrefix("p"), RecipeModelDuration.minutes(value) != nil { return value.uppercased() }
    if let minutes = Int(value) { return RecipeModelDuration.text(minutes: minutes) }
    var minutes = 0
    var number = ""
    for character in value where character != " " {
        if character.isNumber { number.append(character); continue }
        guard let amount = Int(number) else { throw CLIError("\"\(text)\" is not a duration; write 45m, 1h30m, 90 or PT1H30M") }
        switch character {
        case "h": minutes += amount * 60
        case "m": minutes += amount
        default: throw CLIError("\"\(text)\" is not a duration; write 45m, 1h30m, 90 or PT1H30M")
        }
        number = ""
    }
    guard number.isEmpty, !value.isEmpty else { throw CLIError("\"\(text)\" is not a duration; write 45m, 1h30m, 90 or PT1H30M") }
    return RecipeModelDuration.text(minutes: minutes)
}

import RecipeModel
typealias RecipeModelDuration = ISODuration
