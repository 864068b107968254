import RecipeProtocol

extension ImportedRecipe {
    /// The recipe as schema.org JSON-LD (what a dry run returns): the draft's
    /// fields under their schema.org names, the nutrition as a NutritionInformation
    /// object and every image candidate, best first.
    public var schemaOrg: SchemaOrgRecipe {
        let d = draft
        return SchemaOrgRecipe(
            name: d.name, description: d.description, recipeIngredient: d.ingredients.map(\.text),
            recipeInstructions: d.instructions.map { .init(text: $0.text) }, recipeYield: yieldForms,
            prepTime: d.prepTime, cookTime: d.cookTime, totalTime: d.totalTime,
            recipeCategory: d.recipeCategory, recipeCuisine: d.recipeCuisine,
            keywords: d.keywords.isEmpty ? nil : d.keywords.joined(separator: ", "),
            author: d.author.map { .init(name: $0) }, datePublished: d.datePublished,
            image: images.isEmpty ? nil : images,
            nutrition: nutrition.isEmpty ? nil : nutrition.merging(["@type": "NutritionInformation"]) { $1 },
            url: d.website)
    }

    /// The yields as written, followed by the serving counts they name ("3 to 4" → "3 servings", "4 servings").
    var yieldForms: [String]? {
        var forms = yields.isEmpty ? [draft.recipeYield].compactMap { $0 } : yields
        for written in forms {
            let numbers = written.matches(of: #/\d+(?:[.,]\d+)?/#).map { String($0.output).replacingOccurrences(of: ",", with: ".") }
            for number in [numbers.first, numbers.count > 1 ? numbers.last : nil].compactMap({ $0 }) {
                let form = number == "1" ? "1 serving" : "\(number) servings"
                if !forms.contains(form) { forms.append(form) }
            }
        }
        return forms.isEmpty ? nil : forms
    }
}
