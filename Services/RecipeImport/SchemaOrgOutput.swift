import RecipeProtocol

extension ImportedRecipe {
    /// The recipe as schema.org JSON-LD (what a dry run returns): the draft's
    /// fields under their schema.org names, the nutrition as a NutritionInformation
    /// object and every image candidate, best first.
    public var schemaOrg: SchemaOrgRecipe {
        let d = draft
        return SchemaOrgRecipe(
            name: d.name, description: d.description, recipeIngredient: d.ingredients.map(\.text),
            recipeInstructions: d.instructions.map { .init(text: $0.text) }, recipeYield: d.recipeYield,
            prepTime: d.prepTime, cookTime: d.cookTime, totalTime: d.totalTime,
            recipeCategory: d.recipeCategory, recipeCuisine: d.recipeCuisine,
            keywords: d.keywords.isEmpty ? nil : d.keywords.joined(separator: ", "),
            author: d.author.map { .init(name: $0) }, datePublished: d.datePublished,
            image: images.isEmpty ? nil : images,
            nutrition: nutrition.isEmpty ? nil : nutrition.merging(["@type": "NutritionInformation"]) { $1 },
            url: d.website)
    }
}
