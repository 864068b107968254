import RecipeProtocol

extension ImportedRecipe {
    /// The recipe as schema.org JSON-LD (what a dry run returns): the draft's
    /// fields under their schema.org names, the nutrition as a NutritionInformation
    /// object and every image candidate, best first.
    public var schemaOrg: SchemaOrgRecipe {
        let d = draft
        return SchemaOrgRecipe(
            name: d.name, description: d.description, recipeIngredient: d.ingredients.map(\.text),
            recipeInstructions: SchemaOrgRecipe.Step.items(d.instructions.map { ($0.text, $0.section, $0.title) }), recipeYield: yieldForms,
            prepTime: d.prepTime, cookTime: d.cookTime, totalTime: d.totalTime,
            recipeCategory: d.recipeCategory, recipeCuisine: d.recipeCuisine,
            keywords: d.keywords.isEmpty ? nil : d.keywords.joined(separator: ", "),
            author: d.author.map { .init(name: $0) }, datePublished: d.datePublished,
            image: images.isEmpty ? nil : images,
            nutrition: nutrition.isEmpty ? nil : nutrition.merging(["@type": "NutritionInformation"]) { $1 },
            url: d.website)
    }

    /// The yields as written, followed by what `YieldText` reads from them: "28-32 cookies" → "32 cookies", "32 servings".
    var yieldForms: [String]? {
        var forms = yields.isEmpty ? [draft.recipeYield].compactMap { $0 } : yields
        for written in forms {
            for form in YieldText.read(written)?.forms ?? [] where !forms.contains(form) { forms.append(form) }
        }
        return forms.isEmpty ? nil : forms
    }
}
