import GRDB
import RecipeProtocol

/// Where a page of a list that grows with the collection ended: the last item's sort key and id, said as
/// `id:key` (ids hold no colon; a key may). The next page starts after it, so an item added, changed or removed
/// between pages never moves another out of the pages still to come.
struct PageMark: Equatable {
    var id: String
    var key: String

    var text: String { "\(id):\(key)" }

    /// The mark `text` holds; throws, saying what it takes, for anything `op` did not give.
    static func read(_ text: String, op: String) throws -> PageMark {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex, text.utf8.count <= 4_096 else {
            throw refusal(text, op: op)
        }
        return PageMark(id: String(text[..<colon]), key: String(text[text.index(after: colon)...]))
    }

    /// What a page mark `op` did not give is answered with.
    static func refusal(_ text: String, op: String) -> ServiceError {
        ServiceError(.invalidArgument,
            "after \"\(text.prefix(80))\" is not a page mark \(op) gave; give the next of the page before, or leave it out for the first page")
    }

    /// The page in `rows` — fetched with one row past `limit` (all of them when `nil`), which tells whether more
    /// follow — and the mark of its last row (its `id` and the `key` column) when more do.
    static func page(of rows: [Row], limit: Int?, key: String) -> (rows: ArraySlice<Row>, next: String?) {
        let page = rows.prefix(limit ?? rows.count)
        return (page, rows.count > page.count ? page.last.map { PageMark(id: $0["id"], key: $0[key]).text } : nil)
    }

    /// How many items a page holds: `limit`, checked against `maxLimit`; `nil` (every item, in one reply, as before
    /// lists came in pages) when it is left out.
    static func limit(_ limit: Int?, max maxLimit: Int) throws -> Int? {
        guard let limit else { return nil }
        guard (1...maxLimit).contains(limit) else {
            throw ServiceError(.invalidArgument, "limit is \(limit); it must be 1 to \(maxLimit), or left out for every one")
        }
        return limit
    }
}
