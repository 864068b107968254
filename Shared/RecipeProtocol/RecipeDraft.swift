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
            name: recipe.name, description: recipe.description,
            ingredients: recipe.ingredients.map { Line(id: $0.id, text: $0.text) },
            instructions: recipe.instructions.map { Step(id: $0.id, text: $0.text, section: $0.section, title: $0.title) },
            recipeYield: recipe.recipeYield, servings: recipe.servings, prepTime: recipe.prepTime,
            cookTime: recipe.cookTime, totalTime: recipe.totalTime, recipeCategory: recipe.recipeCategory,
            recipeCuisine: recipe.recipeCuisine, keywords: recipe.keywords, author: recipe.author,
            datePublished: recipe.datePublished, nutrition: recipe.nutrition, notes: recipe.notes,
            website: recipe.website, sourceType: recipe.sourceType, bookID: recipe.bookID,
            sourcePageNumber: recipe.sourcePageNumber, isFavorite: recipe.isFavorite, rating: recipe.rating,
            origin: recipe.origin == .imported ? .imported : .custom)
    }

    private enum CodingKeys: String, CodingKey {
        case name, description, ingredients, instructions, recipeYield, servings, prepTime, cookTime, totalTime
        case recipeCategory, recipeCuisine, keywords, author, datePublished, nutrition, notes, website, sourceType
        case bookID, sourcePageNumber, isFavorite, rating, origin
    }

    /// Only `name` is required; lists default to empty, flags to off, origin to `custom`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try c.decode(String.self, forKey: .name),
            description: try c.decodeIfPresent(String.self, forKey: .description),
            ingredients: try c.decodeIfPresent([Line].self, forKey: .ingredients) ?? [],
            instructions: try c.decodeIfPresent([Step].self, forKey: .instructions) ?? [],
            recipeYield: try c.decodeIfPresent(String.self, forKey: .recipeYield),
            servings: try c.decodeIfPresent(Double.self, forKey: .servings),
            prepTime: try c.decodeIfPresent(String.self, forKey: .prepTime),
            cookTime: try c.decodeIfPresent(String.self, forKey: .cookTime),
            totalTime: try c.decodeIfPresent(String.self, forKey: .totalTime),
            recipeCategory: try c.decodeIfPresent(String.self, forKey: .recipeCategory),
            recipeCuisine: try c.decodeIfPresent(String.self, forKey: .recipeCuisine),
            keywords: try c.decodeIfPresent([String].self, forKey: .keywords) ?? [],
            author: try c.decodeIfPresent(String.self, forKey: .author),
            datePublished: try c.decodeIfPresent(String.self, forKey: .datePublished),
            nutrition: try c.decodeIfPresent(String.self, forKey: .nutrition),
            notes: try c.decodeIfPresent(String.self, forKey: .notes),
            website: try c.decodeIfPresent(String.self, forKey: .website),
            sourceType: try c.decodeIfPresent(SourceType.self, forKey: .sourceType) ?? .manual,
            bookID: try c.decodeIfPresent(UUID.self, forKey: .bookID),
            sourcePageNumber: try c.decodeIfPresent(Int.self, forKey: .sourcePageNumber),
            isFavorite: try c.decodeIfPresent(Bool.self, forKey: .isFavorite) ?? false,
            rating: try c.decodeIfPresent(Int.self, forKey: .rating) ?? 0,
            origin: try c.decodeIfPresent(RecipeOrigin.self, forKey: .origin) ?? .custom)
    }
}
