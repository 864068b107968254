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
    /// and the mark of its last row (its `id` and the `key` column) when more follow; see `PageFill`. Without a limit
    /// the question is for every item in one reply (as before lists came in pages): it gets them, or — when they would
    /// pass `wholeListBytes` — `tooLarge`, thrown as soon as they do. A page of large items is never held beside the
    /// rows after it: they are read one at a time.
    static func page<Item: ReplySized>(of rows: RowCursor, limit: Int?, key: String, tooLarge: @escaping @autoclosure () -> ServiceError,
                                       _ item: (Row) throws -> Item) throws -> (items: [Item], next: String?) {
        var fill = PageFill<Item, PageMark>(limit: limit, orElse: tooLarge())
        while let row = try rows.next(), try fill.add(try item(row), at: PageMark(id: row["id"], key: row[key])) {}
        return (fill.items, fill.next?.text)
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

/// A page filled one item at a time: it ends at `limit` items, or before the item that would take its bytes
/// (`approximateBytes`) past `PageMark.pageBytes` — its first item always goes. Without a limit it is every item in one
/// reply, refused (`tooLarge`) as soon as they pass `PageMark.wholeListBytes`. `Mark` is where an item is in the list,
/// so the next page can start after the last one taken.
struct PageFill<Item: ReplySized, Mark> {
    let limit: Int?
    private let tooLarge: (() -> ServiceError)?
    private(set) var items: [Item] = []
    /// The place of the last item taken.
    private(set) var last: Mark?
    /// Whether an item was offered after the page was full.
    private(set) var more = false
    private var bytes = 0

    /// A page of at most `limit` items.
    init(limit: Int) {
        self.limit = limit
        self.tooLarge = nil
    }

    /// A page of at most `limit` items, or — `nil` — every item, refused with `tooLarge` once they pass what one reply
    /// may carry.
    init(limit: Int?, orElse tooLarge: @escaping @autoclosure () -> ServiceError) {
        self.limit = limit
        self.tooLarge = tooLarge
    }

    /// Takes the item `make` makes, at `mark`; false, once the page is full (more follow), and the item is not made.
    mutating func add(_ make: @autoclosure () throws -> Item, at mark: @autoclosure () -> Mark) throws -> Bool {
        guard !more, items.count < limit ?? .max else {
            more = true
            return false
        }
        let item = try make()
        let size = item.approximateBytes
        if !items.isEmpty && bytes + size > (limit == nil ? PageMark.wholeListBytes : PageMark.pageBytes) {
            if limit == nil, let tooLarge { throw tooLarge() }
            more = true
            return false
        }
        items.append(item)
        bytes += size
        last = mark()
        return true
    }

    /// The place of the last item when more follow: where the next page starts.
    var next: Mark? { more ? last : nil }
}
