import Foundation

/// One ingredient line of a recipe: the text as written, and what the parser made of it.
public struct IngredientLine: Codable, Sendable, Equatable, Identifiable {
    /// Stable across edits, so sync and photos can refer to it.
    public var id: UUID
    /// The line as written: "2 cups diced tomatoes".
    public var text: String
    /// The amount, or the low end of a range.
    public var quantity: Double?
    /// The high end of a range ("1-2 onions").
    public var quantityMax: Double?
    /// The canonical unit: "cup", "tbsp", "g"…
    public var unit: String?
    /// The normalized food name used for matching: "tomato".
    public var food: String
    /// Preparation and remarks: "diced".
    public var note: String?

    /// A line with its parse as stored.
    public init(id: UUID, text: String, quantity: Double?, quantityMax: Double?, unit: String?, food: String, note: String?) {
        self.id = id
        self.text = text
        self.quantity = quantity
        self.quantityMax = quantityMax
        self.unit = unit
        self.food = food
        self.note = note
    }

    /// A line with `text`, parsed now.
    public init(id: UUID = .timeOrdered(), text: String) {
        let parsed = IngredientParser.parse(text)
        self.id = id
        self.text = text
        quantity = parsed.quantity
        quantityMax = parsed.quantityMax
        unit = parsed.unit
        food = parsed.food
        note = parsed.note
    }
}

/// One step of a recipe's method.
public struct Instruction: Codable, Sendable, Equatable, Identifiable {
    /// Stable across edits.
    public var id: UUID
    /// What to do.
    public var text: String
    /// The section the step belongs to ("For the sauce"), if the recipe has sections.
    public var section: String?
    /// The step's own title ("Make the caramel"), shown above its text, if it has one.
    public var title: String?

    /// A step.
    public init(id: UUID = .timeOrdered(), text: String, section: String? = nil, title: String? = nil) {
        self.id = id
        self.text = text
        self.section = section
        self.title = title
    }
}

/// A photo of a recipe, as stored: its place in the recipe's order and its content hash.
public struct PhotoInfo: Codable, Sendable, Equatable, Identifiable {
    public var id: UUID
    /// 0-based position in the recipe's photos.
    public var position: Int
    /// Lowercase hex SHA-256 of the bytes: the blob's name.
    public var sha256: String
    public var byteCount: Int
    /// `image/jpeg`, `image/png`, `image/webp` or `image/heic`.
    public var mediaType: String

    public init(id: UUID, position: Int, sha256: String, byteCount: Int, mediaType: String) {
        self.id = id
        self.position = position
        self.sha256 = sha256
        self.byteCount = byteCount
        self.mediaType = mediaType
    }
}

/// A recipe, named after schema.org/Recipe where a name exists.
public struct Recipe: Codable, Sendable, Equatable, Identifiable {
    public var id: UUID
    public var name: String
    public var description: String?
    public var ingredients: [IngredientLine]
    public var instructions: [Instruction]
    /// The yield as written: "4 servings", "1 loaf".
    public var recipeYield: String?
    /// The number of servings, when known.
    public var servings: Double?
    /// ISO 8601 durations as written (`PT15M`).
    public var prepTime: String?
    public var cookTime: String?
    /// As written; when missing, derived from prep + cook (see `totalMinutes`).
    public var totalTime: String?
    public var recipeCategory: String?
    public var recipeCuisine: String?
    public var keywords: [String]
    public var author: String?
    /// The publication date as written (ISO 8601 date).
    public var datePublished: String?
    /// Free-form nutrition text.
    public var nutrition: String?
    /// The user's own notes.
    public var notes: String?
    /// The page the recipe came from.
    public var website: String?
    public var sourceType: SourceType
    public var bookID: UUID?
    public var sourcePageNumber: Int?
    public var isFavorite: Bool
    /// 0 (unrated) to 5.
    public var rating: Int
    public var origin: RecipeOrigin
    public var photos: [PhotoInfo]
    public var createdAt: Date
    public var updatedAt: Date
    /// Increases with every change; an update must name the version it was based on.
    public var version: Int

    public var prepMinutes: Int? { prepTime.flatMap(ISODuration.minutes) }
    public var cookMinutes: Int? { cookTime.flatMap(ISODuration.minutes) }
    /// The total time in minutes: as written, or prep + cook when only those are known.
    public var totalMinutes: Int? {
        if let total = totalTime.flatMap(ISODuration.minutes) { return total }
        switch (prepMinutes, cookMinutes) {
        case let (prep?, cook?): return prep + cook
        case let (prep?, nil): return prep
        case let (nil, cook?): return cook
        default: return nil
        }
    }

    public init(
        id: UUID = .timeOrdered(), name: String, description: String? = nil, ingredients: [IngredientLine] = [],
        instructions: [Instruction] = [], recipeYield: String? = nil, servings: Double? = nil,
        prepTime: String? = nil, cookTime: String? = nil, totalTime: String? = nil,
        recipeCategory: String? = nil, recipeCuisine: String? = nil, keywords: [String] = [],
        author: String? = nil, datePublished: String? = nil, nutrition: String? = nil, notes: String? = nil,
        website: String? = nil, sourceType: SourceType = .manual, bookID: UUID? = nil, sourcePageNumber: Int? = nil,
        isFavorite: Bool = false, rating: Int = 0, origin: RecipeOrigin = .custom, photos: [PhotoInfo] = [],
        createdAt: Date = Date(), updatedAt: Date = Date(), version: Int = 1
    ) {
        self.id = id
        self.name = name
        self.description = description
        self.ingredients = ingredients
        self.instructions = instructions
        self.recipeYield = recipeYield
        self.servings = servings
        self.prepTime = prepTime
        self.cookTime = cookTime
        self.totalTime = totalTime
        self.recipeCategory = recipeCategory
        self.recipeCuisine = recipeCuisine
        self.keywords = keywords
        self.author = author
        self.datePublished = datePublished
        self.nutrition = nutrition
        self.notes = notes
        self.website = website
        self.sourceType = sourceType
        self.bookID = bookID
        self.sourcePageNumber = sourcePageNumber
        self.isFavorite = isFavorite
        self.rating = rating
        self.origin = origin
        self.photos = photos
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.version = version
    }
}
