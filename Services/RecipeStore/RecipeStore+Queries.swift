import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

extension RecipeStore {
    /// The columns `summary(_:)` reads by position, in this order, for any query over `recipes r`; a query may
    /// select more after them, from `summaryColumnCount` on.
    enum SummaryColumn: Int32, CaseIterable {
        case id, title, recipeCategory, recipeCuisine, bookId, isFavorite, rating, origin, totalTimeMinutes, createdAt,
             updatedAt, version, photoCount

        var expression: String {
            switch self {
            case .photoCount: "(SELECT COUNT(*) FROM recipe_photos p WHERE p.recipeId = r.id) AS photoCount"
            default: "r.\(self)"
            }
        }
    }
    static let summaryColumns = SummaryColumn.allCases.map(\.expression).joined(separator: ", ")
    static let summaryColumnCount = Int32(SummaryColumn.allCases.count)

    static func summary(_ row: StatementRow) -> RecipeSummary {
        typealias C = SummaryColumn
        return RecipeSummary(
            id: row.uuid(C.id) ?? UUID(), name: row[C.title, or: ""], recipeCategory: row[C.recipeCategory],
            recipeCuisine: row[C.recipeCuisine], bookID: row.uuid(C.bookId), isFavorite: row[C.isFavorite, or: false],
            rating: row[C.rating, or: 0], origin: RecipeOrigin(rawValue: row[C.origin, or: "custom"]) ?? .custom,
            totalMinutes: row[C.totalTimeMinutes], photoCount: row[C.photoCount, or: 0],
            createdAt: row[C.createdAt, or: Date(timeIntervalSince1970: 0)], updatedAt: row[C.updatedAt, or: Date(timeIntervalSince1970: 0)],
            version: row[C.version, or: 1])
    }

    /// A page of recipes matching `query`, in its order; `nextCursor` continues it.
    public func listRecipes(_ query: RecipeListQuery) async throws -> RecipePage {
        guard (1...RecipeListQuery.maxLimit).contains(query.limit) else {
            throw ServiceError(.invalidArgument, "limit is \(query.limit); it must be 1 to \(RecipeListQuery.maxLimit)")
        }
        let after = try query.cursor.map { try ListCursor(decoding: $0, for: query) }
        let idPrefix = try query.idPrefix.map { prefix -> String in
            let upper = prefix.uppercased()
            guard (1...36).contains(upper.count), upper.allSatisfy({ $0.isHexDigit || $0 == "-" }) else {
                throw ServiceError(.invalidArgument, "idPrefix \"\(prefix)\" must be 1 to 36 hex digits (the start of a recipe id)")
            }
            return upper
        }
        let idSuffix = try query.idSuffix.map { suffix -> String in
            let upper = suffix.uppercased()
            guard (1...36).contains(upper.count), upper.allSatisfy({ $0.isHexDigit || $0 == "-" }) else {
                throw ServiceError(.invalidArgument, "idSuffix \"\(suffix)\" must be 1 to 36 hex digits (the end of a recipe id)")
            }
            return upper
        }
        return try await pool.read { db in
            var conditions: [String] = []
            var arguments: StatementArguments = []
            // Broad filters (unary + keeps SQLite off their index) let the sort index
            // find a page after a few hundred rows; a book is narrow and uses its index.
            if let cuisine = query.cuisine {
                conditions.append("+r.recipeCuisine = ? COLLATE NOCASE")
                arguments += [cuisine.composed] // stored text is composed (NFC)
            }
            if let category = query.category {
                conditions.append("+r.recipeCategory = ? COLLATE NOCASE")
                arguments += [category.composed]
            }
            if let bookID = query.bookID {
                conditions.append("r.bookId = ?")
                arguments += [bookID.databaseText]
            }
            if let favorite = query.favorite {
                conditions.append("+r.isFavorite = ?")
                arguments += [favorite]
            }
            if let idPrefix {
                // A range on the primary key: ids are stored upper-case.
                conditions.append("r.id >= ? AND r.id < ?")
                arguments += [idPrefix, idPrefix + "\u{FFFF}"]
            }
            if let idSuffix {
                // The end of an id has no index: a look at every id (hex digits and dashes only, never a wildcard).
                conditions.append("substr(r.id, -?) = ?")
                arguments += [idSuffix.count, idSuffix]
            }
            if let name = query.name {
                // The name index's own expression; stored names are composed (NFC) and trimmed.
                conditions.append("lower(r.title) = lower(?)")
                arguments += [name.composed.trimmingWhitespace()]
            }
            if let origin = query.origin {
                conditions.append("+r.origin = ?")
                arguments += [origin.rawValue]
            }
            let key = Self.sortExpression(query.sort, descending: query.descending)
            let comparison = query.descending ? "<" : ">"
            if let after {
                conditions.append("(\(key) \(comparison) ? OR (\(key) = ? AND r.id \(comparison) ?))")
                arguments += [after.key, after.key, after.id]
            }
            let direction = query.descending ? "DESC" : "ASC"
            let sql = """
                SELECT \(Self.summaryColumns), \(key) AS sortKey FROM recipes r
                \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "))
                ORDER BY \(key) \(direction), r.id \(direction) LIMIT ?
                """
            arguments += [query.limit + 1]
            var page: [RecipeSummary] = []
            var last: (key: DatabaseValue, id: String)?
            var more = false
            try db.forEachRow(sql, arguments) { row in
                guard page.count < query.limit else {
                    more = true
                    return
                }
                page.append(Self.summary(row))
                last = (row.databaseValue(Self.summaryColumnCount), row[SummaryColumn.id, or: ""])
            }
            var next: String?
            if more, let last {
                next = ListCursor(sort: query.sort, descending: query.descending, key: last.key, id: last.id).encoded
            }
            return RecipePage(recipes: page, nextCursor: next)
        }
    }

    /// What a list sorts by. A recipe with no time, or no rating, comes after the rest whichever way the list runs:
    /// the longest first, or the lowest rated first, does not start with recipes that say nothing of either.
    private static func sortExpression(_ sort: RecipeSort, descending: Bool) -> String {
        switch sort {
        case .name: "lower(r.title)"
        case .createdAt: "r.createdAt"
        case .updatedAt: "r.updatedAt"
        case .rating: descending ? "r.rating" : "(CASE r.rating WHEN 0 THEN 6 ELSE r.rating END)"
        case .totalTime: descending ? "COALESCE(r.totalTimeMinutes, -1)" : "COALESCE(r.totalTimeMinutes, 999999999)" // the first has no index: a scan
        }
    }

    /// The most words a search looks for (each a prefix, all required).
    public static let maxSearchWords = 32
    /// The longest search text, in characters.
    public static let maxSearchLength = 1_000

    /// Recipes matching `text` in name, description, ingredients, keywords or notes,
    /// best first. Each word matches as a prefix ("tom" finds "tomato"); a word given twice counts once; words joined
    /// by OR (in capitals) are alternatives; a word written with "-" before it leaves out the recipes that have it.
    /// A search that runs past the client-read limit (many one- or two-letter words in a large collection)
    /// is stopped and told so.
    public func searchRecipes(_ text: String, limit: Int) async throws -> [SearchHit] {
        guard (1...RecipeListQuery.maxLimit).contains(limit) else {
            throw ServiceError(.invalidArgument, "limit is \(limit); it must be 1 to \(RecipeListQuery.maxLimit)")
        }
        let (match, words) = try Self.searchExpression(text)
        let ranking = self.ranking
        return try await readWithinClientLimit { db in
            // bm25 with these column weights (name, description, ingredients, keywords, notes), through
            // `SearchRanking`, which keeps what bm25 reads for every match between searches. Every match is scored
            // and the best `limit` kept as it goes (no sort of all of them); only those are joined to their recipes.
            try ranking.ranking(match, in: db) { query in
                query.limit = limit
                try db.forEachRow(Self.scoreEveryMatch, [match, nil], bind: { query.bind(to: $0, at: 2) }) { _ in }
                let best = query.ranked
                guard !best.isEmpty else { return [] }
                var hits: [SearchHit] = []
                try db.forEachRow("""
                    WITH m(ftsRowid, rank) AS (VALUES \(Array(repeating: "(?, ?)", count: best.count).joined(separator: ", ")))
                    SELECT \(Self.summaryColumns), m.rank AS rank
                    FROM m JOIN recipe_search_keys k ON k.ftsRowid = m.ftsRowid
                    JOIN recipes r ON r.id = k.recipeId
                    ORDER BY m.rank, lower(r.title)
                    """, StatementArguments(best.flatMap { [$0.rowid.databaseValue, $0.score.databaseValue] })) { row in
                    hits.append(SearchHit(recipe: Self.summary(row), score: -row[Self.summaryColumnCount, or: 0.0]))
                }
                return hits
            }
        } stopped: { limitText in
            let short = words.filter { $0.count <= 2 }
            let advice = short.isEmpty
                ? "use fewer or more specific words"
                : "use fewer words, or longer ones: \(short.prefix(5).map { "\"\($0)\"" }.joined(separator: ", ")) match the start of very many words"
            return ServiceError(.invalidArgument,
                "the search for \(words.count) word\(words.count == 1 ? "" : "s") was stopped after \(limitText) of work, the most one search may take; \(advice)")
        }
    }

    /// The column weights search ranks by: name, description, ingredients, keywords, notes.
    static let searchWeights = "10.0, 2.0, 5.0, 4.0, 1.0"
    /// Scores every match of an FTS5 expression (parameter 1) with `recipe_rank` (its query: parameter 2).
    static let scoreEveryMatch = """
        SELECT count(*) FROM recipes_fts
        WHERE recipes_fts MATCH ? AND recipe_rank(recipes_fts, ?, \(searchWeights)) IS NOT NULL
        """

    /// The FTS5 expression a search text asks for, and the words it looks for; throws, saying why, for a text that
    /// is too long, looks for nothing, or for too many words.
    static func searchExpression(_ text: String) throws -> (match: String, words: [String]) {
        guard text.count <= Self.maxSearchLength else {
            throw ServiceError(.invalidArgument,
                "the search text is \(text.count) characters long; it may be at most \(Self.maxSearchLength)")
        }
        var seen = Set<String>()
        // Stored and indexed text is composed (NFC): a query in the other form finds it too.
        // A word written with "-" before it leaves out the recipes that have it ("pie -pecan"; "-stir-fry" leaves out
        // the words "stir fry" one after the other).
        // Every group must match; a group is one or more alternatives joined by OR, written in capitals ("rice OR
        // noodles"); an alternative is one written word, all of its parts ("stir-fry": "stir" and "fry").
        var groups: [[[String]]] = [], leftOut: [[String]] = []
        var joinsPrevious = false
        for token in text.composed.split(whereSeparator: \.isWhitespace) {
            if token == "OR" {
                joinsPrevious = !groups.isEmpty
                continue
            }
            let parts = token.lowercased().split { !($0.isLetter || $0.isNumber) }.map(String.init)
            guard !parts.isEmpty else { continue }
            if token.hasPrefix("-") {
                leftOut.append(parts)
            } else if joinsPrevious {
                if !groups[groups.count - 1].contains(parts) { groups[groups.count - 1].append(parts) }
            } else if seen.insert(parts.joined(separator: " ")).inserted {
                groups.append([parts])
            }
            joinsPrevious = false
        }
        let words = groups.flatMap { $0.flatMap { $0 } }
        guard !words.isEmpty else {
            if !leftOut.isEmpty {
                throw ServiceError(.invalidArgument, "the search text \"\(text.prefix(80))\" only leaves words out (a word after \"-\"); "
                                   + "give at least one word to look for, such as \"pie -\(leftOut[0].joined(separator: " "))\"")
            }
            throw ServiceError(.invalidArgument, "the search text \"\(text.prefix(80))\" has no words to look for")
        }
        let wordCount = words.count + leftOut.reduce(0) { $0 + $1.count }
        guard wordCount <= Self.maxSearchWords else {
            throw ServiceError(.invalidArgument,
                "the search text has \(wordCount) different words; a search looks for at most \(Self.maxSearchWords)")
        }
        // Each word quoted (so it is never FTS syntax) and matched as a prefix; every group must match, and nothing left out.
        func quoted(_ phrase: [String]) -> String { "\"\(phrase.joined(separator: " ").replacingOccurrences(of: "\"", with: "\"\""))\"*" }
        func all(_ parts: [String]) -> String { parts.map { quoted([$0]) }.joined(separator: " AND ") }
        let wanted = groups.map { group in
            group.count == 1 ? all(group[0]) : "(" + group.map { "(" + all($0) + ")" }.joined(separator: " OR ") + ")"
        }.joined(separator: " AND ")
        let match = leftOut.isEmpty ? wanted : "(\(wanted)) NOT (\(leftOut.map(quoted).joined(separator: " OR ")))"
        return (match, words)
    }
}

/// Where a list page ended: the sort key and id of its last row, and the order it was in.
struct ListCursor: Codable {
    var sort: RecipeSort
    var descending: Bool
    var key: DatabaseValue
    var id: String

    init(sort: RecipeSort, descending: Bool, key: DatabaseValue, id: String) {
        self.sort = sort
        self.descending = descending
        self.key = key
        self.id = id
    }

    private enum CodingKeys: String, CodingKey { case sort, descending, text, number, id }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        sort = try c.decode(RecipeSort.self, forKey: .sort)
        descending = try c.decode(Bool.self, forKey: .descending)
        id = try c.decode(String.self, forKey: .id)
        if let text = try c.decodeIfPresent(String.self, forKey: .text) {
            key = text.databaseValue
        } else {
            key = try c.decode(Double.self, forKey: .number).databaseValue
        }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(sort, forKey: .sort)
        try c.encode(descending, forKey: .descending)
        try c.encode(id, forKey: .id)
        switch key.storage {
        case .string(let text): try c.encode(text, forKey: .text)
        case .int64(let number): try c.encode(Double(number), forKey: .number)
        case .double(let number): try c.encode(number, forKey: .number)
        default: try c.encode("", forKey: .text)
        }
    }

    var encoded: String {
        (try? JSONEncoder().encode(self).base64EncodedString()) ?? ""
    }

    init(decoding text: String, for query: RecipeListQuery) throws {
        guard let data = Data(base64Encoded: text), let cursor = try? JSONDecoder().decode(ListCursor.self, from: data) else {
            throw ServiceError(.invalidArgument, "cursor is not one this service gave out; pass the nextCursor of the previous page")
        }
        guard cursor.sort == query.sort, cursor.descending == query.descending else {
            throw ServiceError(.invalidArgument, "cursor belongs to a list sorted another way; keep sort and descending the same across pages")
        }
        self = cursor
    }
}
