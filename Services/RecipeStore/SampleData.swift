import Foundation
import RecipeModel
import RecipeProtocol

/// The sample collection of seed 004: three books, eight starter recipes and
/// the ingredient catalogue they use. Ids and dates are fixed, so the starters
/// are the same records on every replica.
enum SampleData {
    struct SampleRecipe {
        let number: Int
        let draft: RecipeDraft
        /// The normalized foods seed 004 lists for it, in order.
        let foods: [String]
    }

    static let createdAt = Date(timeIntervalSince1970: 1_704_067_200) // 2024-01-01T00:00:00Z

    /// A fixed id: `kind` (4 hex digits) and `number` both in the first group, so
    /// the short ids tables show (the first 8 digits) tell the samples apart.
    static func id(_ kind: String, _ number: Int, line: Int = 0) -> UUID {
        UUID(uuidString: String(format: "%@%04X-0000-4000-8000-%012X", kind, number, line))!
    }

    static let saltFatAcidHeat = id("5A3B", 1)
    static let theWok = id("5A3B", 2)
    static let ottolenghiSimple = id("5A3B", 3)

    static let books: [Book] = [
        Book(id: saltFatAcidHeat, title: "Salt, Fat, Acid, Heat", author: "Samin Nosrat", createdAt: createdAt, updatedAt: createdAt),
        Book(id: theWok, title: "The Wok", author: "J. Kenji López-Alt", createdAt: createdAt, updatedAt: createdAt),
        Book(id: ottolenghiSimple, title: "Ottolenghi Simple", author: "Yotam Ottolenghi", createdAt: createdAt, updatedAt: createdAt),
    ]

    static func recipeID(_ number: Int) -> UUID { id("5A3C", number) }

    private static func lines(_ number: Int, _ texts: [String]) -> [RecipeDraft.Line] {
        texts.enumerated().map { RecipeDraft.Line(id: id("5A3D", number, line: $0.offset + 1), text: $0.element) }
    }

    private static func steps(_ number: Int, _ texts: [String]) -> [RecipeDraft.Step] {
        texts.enumerated().map { RecipeDraft.Step(id: id("5A3E", number, line: $0.offset + 1), text: $0.element) }
    }

    static let recipes: [SampleRecipe] = [
        SampleRecipe(number: 1, draft: RecipeDraft(
            name: "Classic Tomato Pasta",
            description: "Spaghetti in a quick, bright sauce of fresh tomatoes, garlic and basil.",
            ingredients: lines(1, ["400g spaghetti", "6 large tomatoes, chopped", "4 cloves garlic, thinly sliced",
                                   "4 tbsp olive oil", "1 handful fresh basil", "50g parmesan, grated", "1 tsp salt",
                                   "½ tsp freshly ground black pepper"]),
            instructions: steps(1, ["Bring a large pot of well-salted water to the boil and cook the spaghetti until al dente.",
                                    "Meanwhile, warm the olive oil in a wide pan and cook the garlic gently until fragrant.",
                                    "Add the tomatoes with the salt and simmer for 10 minutes until saucy.",
                                    "Toss the drained pasta through the sauce with the basil, pepper and half the parmesan.",
                                    "Serve with the rest of the parmesan."]),
            recipeYield: "4 servings", servings: 4, prepTime: "PT10M", cookTime: "PT20M",
            recipeCategory: "Dinner", recipeCuisine: "Italian", keywords: ["pasta", "vegetarian", "quick"],
            author: "Samin Nosrat", sourceType: .book, bookID: saltFatAcidHeat, sourcePageNumber: 234),
            foods: ["spaghetti", "tomato", "garlic", "olive oil", "basil", "parmesan", "salt", "black pepper"]),
        SampleRecipe(number: 2, draft: RecipeDraft(
            name: "Chicken Stir-Fry",
            description: "Tender chicken and crisp vegetables in a ginger-garlic soy glaze.",
            ingredients: lines(2, ["2 boneless skinless chicken breasts, sliced", "3 tbsp soy sauce", "1 tbsp fresh ginger, grated",
                                   "2 cloves garlic, minced", "1 head broccoli, cut into florets", "1 bell pepper, sliced",
                                   "2 cups cooked rice", "1 tbsp sesame oil", "1 tbsp cornstarch"]),
            instructions: steps(2, ["Toss the chicken with 1 tablespoon of the soy sauce and the cornstarch.",
                                    "Heat the wok until smoking, add the sesame oil and stir-fry the chicken until browned; set aside.",
                                    "Stir-fry the broccoli and bell pepper for 2 minutes, then add the garlic and ginger.",
                                    "Return the chicken with the rest of the soy sauce and toss until glossy.",
                                    "Serve over the rice."]),
            recipeYield: "2 servings", servings: 2, prepTime: "PT15M", cookTime: "PT10M",
            recipeCategory: "Dinner", recipeCuisine: "Asian", keywords: ["wok", "quick", "chicken"],
            author: "J. Kenji López-Alt", sourceType: .book, bookID: theWok, sourcePageNumber: 112),
            foods: ["chicken breast", "soy sauce", "ginger", "garlic", "broccoli", "bell pepper", "rice", "sesame oil", "cornstarch"]),
        SampleRecipe(number: 3, draft: RecipeDraft(
            name: "Roasted Cauliflower with Tahini",
            description: "Deeply roasted cauliflower with a lemony tahini sauce and lots of parsley.",
            ingredients: lines(3, ["1 large cauliflower, cut into florets", "3 tbsp tahini", "1 lemon, juiced",
                                   "1 clove garlic, crushed", "3 tbsp olive oil", "1 bunch parsley, chopped",
                                   "1 tsp ground cumin", "1 tsp salt"]),
            instructions: steps(3, ["Heat the oven to 220 °C.",
                                    "Toss the cauliflower with the olive oil, cumin and salt and roast for 25 minutes until charred at the edges.",
                                    "Whisk the tahini with the lemon juice, garlic and enough water to make it pourable.",
                                    "Drizzle the sauce over the cauliflower and scatter with parsley."]),
            recipeYield: "4 servings as a side", servings: 4, prepTime: "PT10M", cookTime: "PT25M",
            recipeCategory: "Side", recipeCuisine: "Mediterranean", keywords: ["vegetarian", "vegan", "roast"],
            author: "Yotam Ottolenghi", sourceType: .book, bookID: ottolenghiSimple, sourcePageNumber: 78),
            foods: ["cauliflower", "tahini", "lemon", "garlic", "olive oil", "parsley", "cumin", "salt"]),
        SampleRecipe(number: 4, draft: RecipeDraft(
            name: "Quick Black Bean Soup",
            description: "A smoky, filling soup from the storecupboard, ready in half an hour.",
            ingredients: lines(4, ["2 cans black beans, drained and rinsed", "1 onion, diced", "3 cloves garlic, minced",
                                   "2 tsp ground cumin", "3 cups chicken stock", "1 lime, juiced", "1 handful cilantro, chopped",
                                   "4 tbsp sour cream"]),
            instructions: steps(4, ["Soften the onion in a little oil for 5 minutes, then add the garlic and cumin.",
                                    "Add the beans and stock and simmer for 15 minutes.",
                                    "Blend half the soup and stir it back in; season with the lime juice.",
                                    "Serve topped with sour cream and cilantro."]),
            recipeYield: "4 bowls", servings: 4, prepTime: "PT5M", cookTime: "PT25M",
            recipeCategory: "Lunch", recipeCuisine: "Soup", keywords: ["soup", "beans", "quick"],
            website: "https://example.com/bean-soup", sourceType: .url),
            foods: ["black bean", "onion", "garlic", "cumin", "chicken stock", "lime", "cilantro", "sour cream"]),
        SampleRecipe(number: 5, draft: RecipeDraft(
            name: "Egg Fried Rice",
            description: "Day-old rice fried hot and fast with egg, peas and spring onion.",
            ingredients: lines(5, ["3 cups cooked rice, cold", "3 eggs, beaten", "2 tbsp soy sauce", "1 tsp sesame oil",
                                   "3 spring onions, sliced", "2 cloves garlic, minced", "½ cup peas", "1 carrot, diced"]),
            instructions: steps(5, ["Heat the wok until smoking and scramble the eggs briefly; set aside.",
                                    "Stir-fry the carrot, peas and garlic for 2 minutes.",
                                    "Add the rice and toss until every grain is hot and separate.",
                                    "Return the egg with the soy sauce, sesame oil and spring onions and toss to combine."]),
            recipeYield: "2 servings", servings: 2, prepTime: "PT10M", cookTime: "PT10M",
            recipeCategory: "Dinner", recipeCuisine: "Asian", keywords: ["wok", "rice", "quick", "vegetarian"],
            author: "J. Kenji López-Alt", sourceType: .book, bookID: theWok, sourcePageNumber: 89),
            foods: ["rice", "egg", "soy sauce", "sesame oil", "spring onion", "garlic", "pea", "carrot"]),
        SampleRecipe(number: 6, draft: RecipeDraft(
            name: "Hummus from Scratch",
            description: "Silky hummus with plenty of tahini and lemon.",
            ingredients: lines(6, ["1 can chickpeas, drained", "4 tbsp tahini", "1 lemon, juiced", "1 clove garlic",
                                   "3 tbsp olive oil", "½ tsp ground cumin", "½ tsp salt", "1 pinch paprika"]),
            instructions: steps(6, ["Blend the chickpeas, tahini, lemon juice, garlic, cumin and salt until smooth, adding ice water to loosen.",
                                    "Spread in a shallow bowl, drizzle with the olive oil and dust with paprika."]),
            recipeYield: "1 bowl", servings: 6, prepTime: "PT10M",
            recipeCategory: "Appetizer", recipeCuisine: "Mediterranean", keywords: ["dip", "vegan", "no-cook"],
            sourceType: .manual),
            foods: ["chickpea", "tahini", "lemon", "garlic", "olive oil", "cumin", "salt", "paprika"]),
        SampleRecipe(number: 7, draft: RecipeDraft(
            name: "Duck Breast with Cherry Sauce",
            description: "Crisp-skinned duck breast with a glossy cherry and red wine sauce.",
            ingredients: lines(7, ["2 duck breasts", "200g cherries, pitted", "150 ml red wine", "2 tbsp butter",
                                   "3 sprigs thyme", "1 tsp salt", "½ tsp freshly ground black pepper", "1 tbsp sugar"]),
            instructions: steps(7, ["Score the duck skin, season with salt and pepper and start skin-side down in a cold pan.",
                                    "Cook over medium heat for 12 minutes until the skin is crisp, then turn and cook 3 minutes more; rest.",
                                    "Pour off most of the fat, add the cherries, red wine, sugar and thyme and reduce by half.",
                                    "Whisk in the butter and serve the sauce over the sliced duck."]),
            recipeYield: "2 servings", servings: 2, prepTime: "PT10M", cookTime: "PT30M",
            recipeCategory: "Dinner", recipeCuisine: "French", keywords: ["duck", "special occasion"],
            website: "https://example.com/duck-cherry", sourceType: .url),
            foods: ["duck breast", "cherry", "red wine", "butter", "thyme", "salt", "black pepper", "sugar"]),
        SampleRecipe(number: 8, draft: RecipeDraft(
            name: "Caesar Salad",
            description: "Crisp romaine in a punchy anchovy and parmesan dressing.",
            ingredients: lines(8, ["1 head romaine lettuce, torn", "40g parmesan, shaved", "1 cup croutons", "1 egg",
                                   "4 anchovies", "1 clove garlic", "1 lemon, juiced", "5 tbsp olive oil", "1 tsp dijon mustard"]),
            instructions: steps(8, ["Mash the anchovies and garlic to a paste, then whisk in the egg, mustard and lemon juice.",
                                    "Whisk in the olive oil in a thin stream until thick.",
                                    "Toss the lettuce with the dressing, croutons and parmesan."]),
            recipeYield: "2 servings", servings: 2, prepTime: "PT15M",
            recipeCategory: "Salad", recipeCuisine: "American", keywords: ["salad", "classic"],
            sourceType: .manual),
            foods: ["romaine lettuce", "parmesan", "crouton", "egg", "anchovy", "garlic", "lemon", "olive oil", "dijon mustard"]),
    ]

    /// Every food the samples use, with its category and common other names.
    static let catalogue: [(name: String, category: IngredientCategory, aliases: [String])] = [
        ("spaghetti", .grain, []), ("tomato", .vegetable, []), ("garlic", .vegetable, []),
        ("olive oil", .pantryStaple, ["extra virgin olive oil"]), ("basil", .herb, []), ("parmesan", .dairy, ["parmigiano reggiano"]),
        ("salt", .pantryStaple, ["sea salt", "kosher salt"]), ("black pepper", .spice, ["pepper"]),
        ("chicken breast", .protein, []), ("soy sauce", .condiment, ["soya sauce", "shoyu"]), ("ginger", .spice, []),
        ("broccoli", .vegetable, []), ("bell pepper", .vegetable, ["capsicum", "sweet pepper"]), ("rice", .grain, []),
        ("sesame oil", .pantryStaple, []), ("cornstarch", .pantryStaple, ["cornflour", "corn starch"]),
        ("cauliflower", .vegetable, []), ("tahini", .condiment, ["tahina"]), ("lemon", .fruit, []), ("parsley", .herb, []),
        ("cumin", .spice, []), ("black bean", .protein, ["turtle bean"]), ("onion", .vegetable, []),
        ("chicken stock", .pantryStaple, ["chicken broth"]), ("lime", .fruit, []), ("cilantro", .herb, ["coriander leaf", "fresh coriander"]),
        ("sour cream", .dairy, []), ("egg", .protein, []), ("spring onion", .vegetable, ["scallion", "green onion"]),
        ("pea", .vegetable, ["green pea", "garden pea"]), ("carrot", .vegetable, []), ("chickpea", .protein, ["garbanzo bean"]),
        ("paprika", .spice, []), ("duck breast", .protein, []), ("cherry", .fruit, []), ("red wine", .other, []),
        ("butter", .dairy, []), ("thyme", .herb, []), ("sugar", .pantryStaple, ["caster sugar", "granulated sugar"]),
        ("romaine lettuce", .vegetable, ["romaine", "cos lettuce"]), ("crouton", .grain, []), ("anchovy", .protein, []),
        ("dijon mustard", .condiment, []),
    ]
}
