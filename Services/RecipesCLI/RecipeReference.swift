import Foundation
import RecipeModel
import Messaging
import RecipeProtocol

/// Finds the recipe a person means: a full id, the short id a table shows, or its name.
enum RecipeReference {
    static func resolve(_ reference: String, using client: MessageClient) async throws -> UUID {
        let trimmed = reference.trimmingCharacters(in: .whitespaces)
        if let id = UUID(uuidString: trimmed) { return id }
        if (4...35).contains(trimmed.count), trimmed.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
            // The short id a table shows is an id's end; the start of an id is taken too.
            let ends = try await client.call(RecipeOps.List.self, RecipeListQuery(idSuffix: trimmed, limit: 10)).recipes
            let starts = try await client.call(RecipeOps.List.self, RecipeListQuery(idPrefix: trimmed, limit: 10)).recipes
            var found: [RecipeSummary] = []
            for recipe in ends + starts where !found.contains(where: { $0.id == recipe.id }) { found.append(recipe) }
            if found.count == 1 { return found[0].id }
            if found.count > 1 {
                let named = found.prefix(5).map { "\(Output.shortID($0.id)) \($0.name)" }.joined(separator: "; ")
                let count = ends.count == 10 || starts.count == 10 ? "at least \(found.count)" : "\(found.count)"
                throw CLIError("\"\(trimmed)\" is part of \(count) recipe ids (\(named)\(found.count > 5 ? "; …" : "")); give more of it (or the whole id)",
                               status: ExitStatus.refused)
            }
        }
        // The recipes of exactly that name, however many share its words (a storage from before `name` lists none).
        var exact: [RecipeSummary] = []
        do {
            exact = try await client.call(RecipeOps.List.self, RecipeListQuery(name: trimmed, limit: 10)).recipes
        } catch let error as ServiceError where error.code == .invalidBody {}
        // Otherwise a search for its words (only the words: a "-" in a name leaves nothing out here).
        let words = trimmed.split { !($0.isLetter || $0.isNumber) }.joined(separator: " ")
        let hits = exact.isEmpty && !words.isEmpty
            ? try await client.call(RecipeOps.Search.self, .init(text: words, limit: 20)).hits.map(\.recipe) : []
        if exact.isEmpty { exact = hits.filter { $0.name.caseInsensitiveCompare(trimmed) == .orderedSame } }
        if exact.count == 1 { return exact[0].id }
        // A starter and the one copy made of it (`recipes duplicate` keeps the name): the name means the copy, the one
        // that can be changed.
        let own = exact.filter { $0.origin != .starter }
        if own.count == 1 && exact.count > 1 { return own[0].id }
        let candidates = exact.isEmpty ? hits : exact
        if candidates.count == 1 { return candidates[0].id }
        if candidates.isEmpty {
            throw CLIError("no recipe is called \"\(trimmed)\" and no recipe id starts or ends with it; try `recipes search`", status: ExitStatus.notFound)
        }
        let names = candidates.prefix(5).map { "\(Output.shortID($0.id)) \($0.name)" }.joined(separator: "; ")
        throw CLIError("\"\(trimmed)\" could be \(candidates.count) recipes (\(names)\(candidates.count > 5 ? "; …" : "")); use an id", status: ExitStatus.refused)
    }
}

/// "15m", "1h30m", "2d", "1d12h", "90" (minutes) or ISO 8601 ("PT15M") → ISO 8601, at most `ISODuration.maxMinutes`.
func isoDuration(_ text: String) throws -> String {
    let value = text.trimmingCharacters(in: .whitespaces).lowercased()
    let usage = "\"\(text)\" is not a duration; write 45m, 1h30m, 2d, 90 or PT1H30M"
    let tooLong = "\"\(text)\" is longer than a recipe may take; durations may be at most \(ISODuration.maxMinutes / 1_440) days"
    if value.hasPrefix("p") {
        if let problem = ISODuration.problem(value.uppercased(), field: "the duration") { throw CLIError(problem) }
        return value.uppercased()
    }
    var minutes = 0
    var number = ""
    func add(_ unit: Int) throws {
        // Digits beyond what a year holds are out of range long before they overflow.
        guard number.count <= 9, let amount = Int(number) else { throw CLIError(number.isEmpty ? usage : tooLong) }
        minutes += amount * unit
        guard minutes <= ISODuration.maxMinutes else { throw CLIError(tooLong) }
        number = ""
    }
    for character in value where character != " " {
        if character.isASCII && character.isNumber { number.append(character); continue }
        switch character {
        case "d": try add(1_440)
        case "h": try add(60)
        case "m": try add(1)
        default: throw CLIError(usage)
        }
    }
    if !number.isEmpty { try add(1) } // a bare number, or minutes after hours ("1h30")
    guard !value.isEmpty else { throw CLIError(usage) }
    return RecipeModelDuration.text(minutes: minutes)
}

typealias RecipeModelDuration = ISODuration
