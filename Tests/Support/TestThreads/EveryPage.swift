/// Every page of a list that comes a page at a time, from the first (`after` nil) to the one with no `next` —
/// bounded: a page mark that comes again, or more than `maxPages` pages, throws (a list that would never end).
public func everyPage<Item>(maxPages: Int = 1_000,
                            _ page: (_ after: String?) async throws -> (items: [Item], next: String?)) async throws -> [[Item]] {
    var pages: [[Item]] = []
    var after: String?
    var marks = Set<String>()
    while pages.count < maxPages {
        let (items, next) = try await page(after)
        pages.append(items)
        guard let next else { return pages }
        guard marks.insert(next).inserted else { throw PagingError(description: "the page mark \(next) came twice") }
        after = next
    }
    throw PagingError(description: "over \(maxPages) pages")
}

public struct PagingError: Error, CustomStringConvertible {
    public let description: String
}
