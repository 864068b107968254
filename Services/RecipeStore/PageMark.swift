import GRDB
import RecipeProtocol

/// Where a page of a list that grows with the collection ended: the last item's sort key and id, said as
/// `id:key` (ids hold no colon; a key may). The next page starts after it, so an item added, changed or removed
/// between pages never moves another out of the pages still to come.
struct PageMark: Equatable {
    var id: String
    var key: String

    var text: String { "\(id):\(key)" }

    /// The most bytes a mark may have: a key is at most 200 characters (a book's title), and a character at most a
    /// letter under 30 combining marks (124 bytes); 4 KiB refused the mark after such a title, ending the list there.
    static let maxBytes = 32 * 1_024

    /// The mark `text` holds; throws, saying what it takes, for anything `op` did not give.
    static func read(_ text: String, op: String) throws -> PageMark {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex, text.utf8.count <= Self.maxBytes else {
            throw refusal(text, op: op)
        }
        return PageMark(id: String(text[..<colon]), key: String(text[text.index(after: colon)...]))
    }

    /// What a page mark `op` did not give is answered with.
    static func refusal(_ text: String, op: String) -> ServiceError {
        ServiceError(.invalidArgument,
            "after \"\(text.prefix(80))\" is not a page mark \(op) gave; give the next of the page before, or leave it out for the first page")
    }

    /// The most bytes of stored values one page carries before it ends early (2 MiB). Items are bounded in characters,
    /// and pages in items, but a character may take many bytes and a list grows: without it, a thousand entries of long
    /// text in combining marks made a reply of gigabytes (refused as too large, on every try). With it a reply stays far
    /// under the 16 MiB one may carry, however large its items, even where JSON escapes make a byte six.
    static let pageBytes = 2 * 1_024 * 1_024

    /// The most bytes of stored values a reply to a question without a limit is built to: every item in one reply
    /// cannot pass the 16 MiB a reply may carry (`WireProtocol.defaultMaxFrameBytes`), so a list that would is refused
    /// once its items pass it — not after every item of a collection of any size was made and encoded.
    static let wholeListBytes = WireProtocol.defaultMaxFrameBytes

    /// What a question for every item of `op` in one reply is answered with when they would pass `wholeListBytes`.
    static func tooLargeForOneReply(_ what: String, op: String, maxLimit: Int) -> ServiceError {
        ServiceError(.messageTooLarge,
            "every \(what) in one reply would pass the \(wholeListBytes / 1_048_576) MiB one reply may carry; ask \(op) for pages: a limit of 1 to \(maxLimit), then the next each page gives")
    }

    /// The page read from `rows` — fetched with one row past `limit` (every row when `nil`) — made into items by `item`,
    /// and the mark of its last row (its `id` and the `key` column) when more follow; see `collect`. Without a limit
    /// the question is for every item in one reply (as before lists came in pages): it gets them, or — when they would
    /// pass `wholeListBytes` — `tooLarge`, thrown as soon as they do.
    static func page<Item: ReplySized>(of rows: RowCursor, limit: Int?, key: String, tooLarge: ServiceError,
                                       _ item: (Row) throws -> Item) throws -> (items: [Item], next: String?) {
        let (items, last, more) = try collect(rows, limit: limit, maxBytes: limit == nil ? wholeListBytes : pageBytes, item) {
            PageMark(id: $0["id"], key: $0[key]).text
        }
        if more && limit == nil { throw tooLarge }
        return (items, more ? last : nil)
    }

    /// Items made by `item` from `rows`, read one at a time, until `limit` of them (`nil`: no limit) or until the next
    /// would take their bytes (`approximateBytes`) past `maxBytes` — the first always goes; what `mark` says of the
    /// last row taken, and whether a row followed it. A page of large items is never held beside the rows after it.
    static func collect<Item: ReplySized, Mark>(_ rows: RowCursor, limit: Int?, maxBytes: Int, _ item: (Row) throws -> Item,
                                                mark: (Row) -> Mark) throws -> (items: [Item], last: Mark?, more: Bool) {
        var items: [Item] = []
        var bytes = 0
        var last: Mark?
        while let row = try rows.next() {
            if items.count == limit ?? .max { return (items, last, true) }
            let made = try item(row)
            let size = made.approximateBytes
            if !items.isEmpty && bytes + size > maxBytes { return (items, last, true) }
            items.append(made)
            bytes += size
            last = mark(row)
        }
        return (items, last, false)
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
