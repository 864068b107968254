import Messaging
import RecipeModel
import RecipeProtocol

/// Every item of a list that comes a page at a time: `page` is asked for the first page (`nil`), then for the page
/// after each one, until a page says none follow.
func readAllPages<Item>(_ page: (_ after: String?) async throws -> (items: [Item], next: String?)) async throws -> [Item] {
    try await readPages(page).items
}

/// The items of the page after `start` (the first page when `nil`) and, with `all`, of every page after it; and the
/// mark of the page that would follow the last one read (`nil` when none follows).
func readPages<Item>(after start: String? = nil, all: Bool = true,
                     _ page: (_ after: String?) async throws -> (items: [Item], next: String?)) async throws -> (items: [Item], next: String?) {
    var items: [Item] = []
    var after = start
    repeat {
        let (some, next) = try await page(after)
        items += some
        // A page mark never repeats; one that did would never end.
        guard next != after else { return (items, nil) }
        after = next
    } while all && after != nil
    return (items, after)
}

/// Every book with its recipe count, by title.
func allBooks(_ client: MessageClient) async throws -> [BookSummary] {
    try await readAllPages { after in
        let page = try await client.call(BookOps.List.self, .init(limit: BookOps.List.maxLimit, after: after))
        return (page.books, page.next)
    }
}

/// The whole catalogue by name (only `category` when given).
func allIngredients(_ client: MessageClient, category: IngredientCategory?) async throws -> [CatalogueEntry] {
    try await readAllPages { after in
        let page = try await client.call(IngredientOps.List.self, .init(category: category, limit: IngredientOps.List.maxLimit, after: after))
        return (page.ingredients, page.next)
    }
}

/// Every unresolved conflict. One whose record changed while the pages were read can come twice: it is listed once,
/// as the later page had it.
func allConflicts(_ client: MessageClient) async throws -> [SyncConflict] {
    let read = try await readAllPages { after in
        let page = try await client.call(ConflictOps.List.self, .init(limit: ConflictOps.List.maxLimit, after: after))
        return (page.conflicts, page.next)
    }
    var place: [String: Int] = [:]
    var listed: [SyncConflict] = []
    for conflict in read {
        if let index = place[conflict.id] {
            listed[index] = conflict
        } else {
            place[conflict.id] = listed.count
            listed.append(conflict)
        }
    }
    return listed
}
