import Foundation

/// A recipe as schema.org JSON-LD: what a dry-run import returns and what
/// `recipes import --dry-run --json` prints. Field names are schema.org's.
public struct SchemaOrgRecipe: Codable, Sendable, Equatable {
    /// `{"@type": "HowToStep", "text": …}`.
    public struct Step: Codable, Sendable, Equatable {
        public var type = "HowToStep"
        public var text: String
        public init(text: String) { self.text = text }
        enum CodingKeys: String, CodingKey {
            case type = "@type"
            case text
        }
    }

    /// `{"@type": "Person", "name": …}`.
    public struct Person: Codable, Sendable, Equatable {
        public var type = "Person"
        public var name: String
        public init(name: String) { self.name = name }
        enum CodingKeys: String, CodingKey {
            case type = "@type"
            case name
        }
    }

    public var context = "https://schema.org"
    public var type = "Recipe"
    public var name: String
    public var description: String?
    public var recipeIngredient: [String]
    public var recipeInstructions: [Step]
    /// The yield as written, then as a serving count ("4 servings") when it names one.
    public var recipeYield: [String]?
    public var prepTime: String?
    public var cookTime: String?
    public var totalTime: String?
    public var recipeCategory: String?
    public var recipeCuisine: String?
    /// Comma-separated, as schema.org writes keywords.
    public var keywords: String?
    public var author: Person?
    public var datePublished: String?
    /// Image addresses, the best first.
    public var image: [String]?
    /// A NutritionInformation object (`@type` plus `calories`, `fatContent`…), when the page had one.
    public var nutrition: [String: String]?
    /// The page the recipe came from.
    public var url: String?

    public init(name: String, description: String? = nil, recipeIngredient: [String] = [], recipeInstructions: [Step] = [],
                recipeYield: [String]? = nil, prepTime: String? = nil, cookTime: String? = nil, totalTime: String? = nil,
                recipeCategory: String? = nil, recipeCuisine: String? = nil, keywords: String? = nil, author: Person? = nil,
                datePublished: String? = nil, image: [String]? = nil, nutrition: [String: String]? = nil, url: String? = nil) {
        self.name = name
        self.description = description
        self.recipeIngredient = recipeIngredient
        self.recipeInstructions = recipeInstructions
        self.recipeYield = recipeYield
        self.prepTime = prepTime
        self.cookTime = cookTime
        self.totalTime = totalTime
        self.recipeCategory = recipeCategory
        self.recipeCuisine = recipeCuisine
        self.keywords = keywords
        self.author = author
        self.datePublished = datePublished
        self.image = image
        self.nutrition = nutrition
        self.url = url
    }

    enum CodingKeys: String, CodingKey {
        case context = "@context"
        case type = "@type"
        case name, description, recipeIngredient, recipeInstructions, recipeYield, prepTime, cookTime, totalTime
        case recipeCategory, recipeCuisine, keywords, author, datePublished, image, nutrition, url
    }
}
