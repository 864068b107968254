import Foundation

/// A recipe as schema.org JSON-LD: what a dry-run import returns and what
/// `recipes import --dry-run --json` prints. Field names are schema.org's.
public struct SchemaOrgRecipe: Codable, Sendable, Equatable {
    /// A `HowToStep` (`text`, and `name` when the step has a title of its own) or a `HowToSection`
    /// (`name`, and its steps in `itemListElement`).
    public struct Step: Codable, Sendable, Equatable {
        public var type: String
        public var name: String?
        public var text: String?
        public var itemListElement: [Step]?

        /// A step, with its title if it has one.
        public init(text: String, title: String? = nil) {
            type = "HowToStep"
            self.text = text
            name = title
        }

        /// A section and its steps.
        public init(section: String, steps: [Step]) {
            type = "HowToSection"
            name = section
            itemListElement = steps
        }

        /// Steps as schema.org writes them: each run of consecutive steps of one section inside a
        /// `HowToSection` named after it, steps of no section as they are.
        public static func items(_ steps: [(text: String, section: String?, title: String?)]) -> [Step] {
            var items: [Step] = []
            var index = steps.startIndex
            while index < steps.endIndex {
                guard let section = steps[index].section else {
                    items.append(Step(text: steps[index].text, title: steps[index].title))
                    index += 1
                    continue
                }
                var run: [Step] = []
                while index < steps.endIndex, steps[index].section == section {
                    run.append(Step(text: steps[index].text, title: steps[index].title))
                    index += 1
                }
                items.append(Step(section: section, steps: run))
            }
            return items
        }

        /// How many steps this item holds (a section: its steps).
        public var stepCount: Int { itemListElement.map { $0.reduce(0) { $0 + $1.stepCount } } ?? 1 }

        enum CodingKeys: String, CodingKey {
            case type = "@type"
            case name, text, itemListElement
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
