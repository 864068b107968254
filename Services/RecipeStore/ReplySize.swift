import RecipeModel
import RecipeProtocol

/// An item of a list that grows with the collection, sized from its values as a reply carries them: what a page counts
/// against `PageMark.pageBytes`, and every item at once against `PageMark.wholeListBytes`. One way for every list, read
/// from the values already made (a native string knows its UTF-8 length), not from the rows again.
protocol ReplySized {
    /// About the bytes it takes in a reply's JSON: its texts by their UTF-8, plus `ReplySize.fixed` for the rest.
    var approximateBytes: Int { get }
}

enum ReplySize {
    /// What an item's ids, dates, numbers and field names take, about, whatever its texts.
    static let fixed = 256

    /// The UTF-8 bytes of `texts`, those present.
    static func of(_ texts: String?...) -> Int {
        texts.reduce(0) { $0 + ($1?.utf8.count ?? 0) }
    }
}

extension BookSummary: ReplySized {
    var approximateBytes: Int { ReplySize.fixed + ReplySize.of(book.title, book.author) }
}

extension CatalogueEntry: ReplySized {
    var approximateBytes: Int { ReplySize.fixed + ReplySize.of(name) + aliases.reduce(0) { $0 + $1.utf8.count + 4 } }
}

extension CookLogEntry: ReplySized {
    var approximateBytes: Int { ReplySize.fixed + ReplySize.of(recipeName, note) }
}

extension RecipeSummary: ReplySized {
    var approximateBytes: Int { ReplySize.fixed + ReplySize.of(name, recipeCategory, recipeCuisine) }
}

extension ImportJob.Item: ReplySized {
    var approximateBytes: Int { ReplySize.fixed + ReplySize.of(url, recipeName, error?.message, photoNote) }
}

extension SyncConflict: ReplySized {
    /// Its kept values (a field of a recipe: a list of steps may be megabytes), and its names.
    var approximateBytes: Int {
        ReplySize.fixed + ReplySize.of(id, recordID, recordName, copyID) + fields.reduce(0) { $0 + $1.utf8.count + 4 }
            + (lostValues.map { JSONValue.object($0).approximateBytes } ?? 0)
    }
}
