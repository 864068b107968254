import Foundation
import RecipeModel

/// A recipe as a client sends it to create or replace one. The service parses
/// the ingredient lines and fills in ids, times and versions.
public struct RecipeDraft: Codable, Sendable, Equatable {
    /// An ingredient line: its text, and its id when it already has one.
    public struct Line: Codable, Sendable, Equatable {
        public var id: UUID?
        public var text: String

        public init(id: UUID? = nil, text: String) {
            self.id = id
            self.text = text
        }

        /// Accepts `"2 cups rice"` or `{"id": "…", "text": "2 cups rice"}`.
        public init(from decoder: any Decoder) throws {
            if let text = try? decoder.singleValueContainer().decode(String.self) {
                self.init(text: text)
                return
            }
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(id: try container.decodeIfPresent(UUID.self, forKey: .id), text: try container.decode(String.self, forKey: .text))
        }
    }

    /// A step: its text, section, title, and id when it already has one.
    public struct Step: Codable, Sendable, Equatable {
        public var id: UUID?
        public var text: String
        public var section: String?
        /// The step's own title ("Make the caramel"), if it has one.
        public var title: String?

        public init(id: UUID? = nil, text: String, section: String? = nil, title: String? = nil) {
            self.id = id
            self.text = text
            self.section = section
            self.title = title
        }

        /// Accepts `"Boil the water."` or `{"id": "…", "text": "…", "section": "…", "title": "…"}`.
        public init(from decoder: any Decoder) throws {
            if let text = try? decoder.singleValueContainer().decode(String.self) {
                self.init(text: text)
                return
            }
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                id: try container.decodeIfPresent(UUID.self, forKey: .id),
                text: try container.decode(String.self, forKey: .text),
                section: try container.decodeIfPresent(String.self, forKey: .section),
                title: try container.decodeIfPresent(String.self, forKey: .title))
        }
    }

    public var name: String
    public var description: String?
    public var ingredients: [Line]
    public var instructions: [Step]
    public var recipeYield: String?
    public var servings: Double?
    public var prepTime: String?
    public var cookTime: String?
    public var totalTime: String?
    public var recipeCategory: String?
    public var recipeCuisine: String?
    public var keywords: [String]
    public var author: String?
    public var datePublished: String?
    public var nutrition: String?
    public var notes: String?
    public var website: String?
    public var sourceType: SourceType
    public var bookID: UUID?
    public var sourcePageNumber: Int?
    public var isFavorite: Bool
    public var rating: Int
    /// `custom` (the default) or `imported`; `starter` and `conflictedCopy` are the service's own.
    public var origin: RecipeOrigin

    public init(
        name: String, description: String? = nil, ingredients: [Line] = [], instructions: [Step] = [],
        recipeYield: String? = nil, servings: Double? = nil, prepTime: String? = nil, cookTime: String? = nil,
        totalTime: String? = nil, recipeCategory: String? = nil, recipeCuisine: String? = nil, keywords: [String] = [],
        author: String? = nil, datePublished: String? = nil, nutrition: String? = nil, notes: String? = nil,
        website: String? = nil, sourceType: SourceType = .manual, bookID: UUID? = nil, sourcePageNumber: Int? = nil,
        isFavorite: Bool = false, rating: Int = 0, origin: RecipeOrigin = .custom
    ) {
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
    }

    /// The draft of an existing recipe (to edit it and send it back).
    public init(_ recipe: Recipe) {
        self.init(
            name: recipe.name,
            ingredients: recipe.ingredients.map { Line(id: $0.id, text: $0.text) },
            instructions: recipe.instructions.map { Step(id: $0.id, text: $0.text, section: $0.section, title: $0.title) },
            servings: recipe.servings, keywords: recipe.keywords, sourceType: recipe.sourceType, bookID: recipe.bookID,
            sourcePageNumber: recipe.sourcePageNumber, isFavorite: recipe.isFavorite, rating: recipe.rating,
            origin: recipe.origin == .imported ? .imported : .custom)
        for field in RecipeTextField.all { self[keyPath: field.draft] = recipe[keyPath: field.recipe] }
    }

    /// The names of a draft's fields in JSON.
    public static let fieldNames: [String] = ["name", "ingredients", "instructions", "servings", "keywords", "sourceType", "bookID",
                                             "sourcePageNumber", "isFavorite", "rating", "origin"] + RecipeTextField.all.map(\.name)
    private static let knownFields = Set(fieldNames)
    /// What people (and schema.org) call some fields, for the refusal of a draft that names one so.
    private static let otherNames: [String: String] = [
        "ingredient": "ingredients", "recipeIngredient": "ingredients", "steps": "instructions", "step": "instructions",
        "recipeInstructions": "instructions", "method": "instructions", "directions": "instructions", "title": "name",
        "keyword": "keywords", "tags": "keywords", "yield": "recipeYield", "category": "recipeCategory", "cuisine": "recipeCuisine",
        "url": "website", "source": "website", "note": "notes", "favorite": "isFavorite",
    ]

    /// Set to `true` in a decoder's `userInfo` where a draft is what a person or client wrote as one — a request, a
    /// draft file given to `recipes add` or `edit`: a field the draft does not have is then refused, naming it, for a
    /// misspelt or foreign name ("ingredient", "recipeIngredient") would be dropped without a word and the recipe stored
    /// without what it held. Other apps' files, read as drafts where they can be, keep their own fields unread.
    public static let checksFields = CodingUserInfoKey(rawValue: "RecipeDraft.checksFields")!

    /// Only `name` is required; lists default to empty, flags to off, origin to `custom`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKey.self)
        if decoder.userInfo[Self.checksFields] as? Bool == true,
           let unknown = c.allKeys.first(where: { !Self.knownFields.contains($0.stringValue) }) {
            let hint = Self.otherNames[unknown.stringValue].map { "; use \($0)" } ?? ""
            throw DecodingError.dataCorruptedError(
                forKey: unknown, in: c,
                debugDescription: "a recipe has no such field\(hint) (its fields: \(Self.fieldNames.joined(separator: ", ")))")
        }
        self.init(
            name: try c.decode(String.self, forKey: FieldKey("name")),
            ingredients: try c.decodeIfPresent([Line].self, forKey: FieldKey("ingredients")) ?? [],
            instructions: try c.decodeIfPresent([Step].self, forKey: FieldKey("instructions")) ?? [],
            servings: try c.decodeIfPresent(Double.self, forKey: FieldKey("servings")),
            keywords: try c.decodeIfPresent([String].self, forKey: FieldKey("keywords")) ?? [],
            sourceType: try c.decodeIfPresent(SourceType.self, forKey: FieldKey("sourceType")) ?? .manual,
            bookID: try c.decodeIfPresent(UUID.self, forKey: FieldKey("bookID")),
            sourcePageNumber: try c.decodeIfPresent(Int.self, forKey: FieldKey("sourcePageNumber")),
            isFavorite: try c.decodeIfPresent(Bool.self, forKey: FieldKey("isFavorite")) ?? false,
            rating: try c.decodeIfPresent(Int.self, forKey: FieldKey("rating")) ?? 0,
            origin: try c.decodeIfPresent(RecipeOrigin.self, forKey: FieldKey("origin")) ?? .custom)
        for field in RecipeTextField.all {
            self[keyPath: field.draft] = try c.decodeIfPresent(String.self, forKey: FieldKey(field.name))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        try c.encode(name, forKey: FieldKey("name"))
        try c.encode(ingredients, forKey: FieldKey("ingredients"))
        try c.encode(instructions, forKey: FieldKey("instructions"))
        try c.encodeIfPresent(servings, forKey: FieldKey("servings"))
        try c.encode(keywords, forKey: FieldKey("keywords"))
        try c.encode(sourceType, forKey: FieldKey("sourceType"))
        try c.encodeIfPresent(bookID, forKey: FieldKey("bookID"))
        try c.encodeIfPresent(sourcePageNumber, forKey: FieldKey("sourcePageNumber"))
        try c.encode(isFavorite, forKey: FieldKey("isFavorite"))
        try c.encode(rating, forKey: FieldKey("rating"))
        try c.encode(origin, forKey: FieldKey("origin"))
        for field in RecipeTextField.all {
            try c.encodeIfPresent(self[keyPath: field.draft], forKey: FieldKey(field.name))
        }
    }
}
