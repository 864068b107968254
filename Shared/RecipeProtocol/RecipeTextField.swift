import RecipeModel

/// A recipe's optional text fields — `description`, `notes`, `website` and the rest — each named once.
///
/// Everything that moves a recipe's text between its forms reads this list: the draft's JSON, its
/// validation, the copy from a recipe to a draft, the `recipes` table's columns (read, and written by one
/// UPDATE), the sync record's values and their way back into a draft, and the fields a sync record may
/// carry. A new optional text field is a property on `Recipe` and on `RecipeDraft`, an entry here and a
/// migration adding its column; nothing else names it.
public struct RecipeTextField: Sendable {
    /// What the field may hold (checked by `RecipeDraft.validate()`).
    public enum Kind: Sendable {
        /// One line: at most `RecipeDraft.Limits.lineLength` characters.
        case line
        /// Free text: at most `RecipeDraft.Limits.textLength` characters.
        case text
        /// An ISO 8601 duration (`PT1H30M`).
        case duration
    }

    /// The name in JSON (requests, replies, sync records).
    public let name: String
    /// The column of the `recipes` table.
    public let column: String
    public let kind: Kind
    public let recipe: any WritableKeyPath<Recipe, String?> & Sendable
    public let draft: any WritableKeyPath<RecipeDraft, String?> & Sendable

    init(_ name: String, column: String? = nil, _ kind: Kind,
         _ recipe: any WritableKeyPath<Recipe, String?> & Sendable, _ draft: any WritableKeyPath<RecipeDraft, String?> & Sendable) {
        self.name = name
        self.column = column ?? name
        self.kind = kind
        self.recipe = recipe
        self.draft = draft
    }

    /// Every optional text field, in the order the table's columns are read.
    public static let all: [RecipeTextField] = [
        RecipeTextField("description", column: "summary", .text, \.description, \.description),
        RecipeTextField("recipeYield", .line, \.recipeYield, \.recipeYield),
        RecipeTextField("prepTime", .duration, \.prepTime, \.prepTime),
        RecipeTextField("cookTime", .duration, \.cookTime, \.cookTime),
        RecipeTextField("totalTime", .duration, \.totalTime, \.totalTime),
        RecipeTextField("recipeCategory", .line, \.recipeCategory, \.recipeCategory),
        RecipeTextField("recipeCuisine", .line, \.recipeCuisine, \.recipeCuisine),
        RecipeTextField("author", .line, \.author, \.author),
        RecipeTextField("datePublished", .line, \.datePublished, \.datePublished),
        RecipeTextField("nutrition", .text, \.nutrition, \.nutrition),
        RecipeTextField("notes", .text, \.notes, \.notes),
        RecipeTextField("website", .line, \.website, \.website),
    ]

    /// The names of `all`.
    public static let names: [String] = all.map(\.name)
}

/// A coding key made from a field's name, for the fields `RecipeTextField` lists.
struct FieldKey: CodingKey {
    let stringValue: String
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}
