import Foundation
import RecipeProtocol
import TestRandom

/// Recipes of realistic size, made from a fixed seed: 6–16 ingredient lines,
/// 4–12 steps, a description, keywords and notes.
public struct RecipeGenerator {
    private var random: SplitMix

    public init(seed: UInt64) { random = SplitMix(seed: seed) }

    private mutating func next() -> UInt64 { random.next() }

    public mutating func pick<T>(_ items: [T]) -> T { items[Int(next() % UInt64(items.count))] }
    public mutating func number(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }

    public static let foods = ["tomatoes", "onion", "garlic", "olive oil", "butter", "flour", "sugar", "eggs", "milk", "rice",
                        "chicken breast", "beef mince", "carrots", "celery", "potatoes", "spinach", "lemon", "lime", "basil",
                        "parsley", "cumin", "paprika", "soy sauce", "ginger", "chickpeas", "lentils", "coconut milk",
                        "mushrooms", "parmesan", "cream", "salt", "black pepper", "honey", "mustard", "thyme", "rosemary",
                        "bell pepper", "zucchini", "aubergine", "feta", "yoghurt", "oats", "almonds", "cinnamon", "vanilla"]
    public static let units = ["g", "cups", "tbsp", "tsp", "ml", "cloves", "", "pinch"]
    public static let words = ["simmer", "stir", "roast", "crisp", "golden", "gently", "season", "whisk", "fold", "toast",
                        "slowly", "bright", "smoky", "rich", "fresh", "tender", "quick", "weeknight", "family", "spicy"]
    public static let cuisines = ["Italian", "Asian", "Mediterranean", "French", "American", "Indian", "Mexican", "Soup"]
    public static let categories = ["Dinner", "Lunch", "Breakfast", "Dessert", "Side", "Snack"]

    /// A word of a long-tailed vocabulary (as real text has): a few words are
    /// everywhere, most are rare. Rank r is drawn with probability ~ 1/r.
    public mutating func vocabularyWord() -> String {
        let rank = Int(pow(Double(Self.vocabulary.count), Double(next() % 10_000) / 10_000))
        return Self.vocabulary[min(rank, Self.vocabulary.count) - 1]
    }

    /// 4,000 pronounceable made-up words, most common first, behind the real ones.
    public static let vocabulary: [String] = {
        let onsets = ["b", "c", "d", "f", "g", "l", "m", "n", "p", "r", "s", "t", "v", "br", "cr", "gr", "pl", "st", "tr", "ch"]
        let vowels = ["a", "e", "i", "o", "u", "ai", "ea", "oo", "ou", "ie"]
        let codas = ["", "n", "r", "l", "s", "t", "m", "nd", "rk", "sh"]
        var words = Self.words
        var generator = RecipeGenerator(seed: 99)
        while words.count < 4_000 {
            let syllables = 2 + Int(generator.next() % 2)
            let word = (0..<syllables).map { _ in generator.pick(onsets) + generator.pick(vowels) + generator.pick(codas) }.joined()
            if !words.contains(word) { words.append(word) }
        }
        return words
    }()

    public mutating func sentence(_ words: Int) -> String {
        (0..<words).map { _ in vocabularyWord() }.joined(separator: " ").capitalized + "."
    }

    public mutating func draft(_ index: Int) -> RecipeDraft {
        let main = pick(Self.foods)
        let ingredients = (0..<number(6...16)).map { _ -> RecipeDraft.Line in
            let unit = pick(Self.units)
            return RecipeDraft.Line(text: "\(number(1...500)) \(unit)\(unit.isEmpty ? "" : " ")\(pick(Self.foods)), \(pick(Self.words))")
        }
        let steps = (0..<number(4...12)).map { _ in RecipeDraft.Step(text: sentence(number(8...30))) }
        return RecipeDraft(
            name: "\(vocabularyWord().capitalized) \(main) \(pick(["bake", "stew", "salad", "pasta", "curry", "soup", "tart"])) \(index)",
            description: sentence(number(10...40)), ingredients: [RecipeDraft.Line(text: "\(number(100...900)) g \(main)")] + ingredients,
            instructions: steps, recipeYield: "\(number(1...8)) servings", servings: Double(number(1...8)),
            prepTime: "PT\(number(5...45))M", cookTime: "PT\(number(10...180))M",
            recipeCategory: pick(Self.categories), recipeCuisine: pick(Self.cuisines),
            keywords: (0..<number(1...5)).map { _ in vocabularyWord() }, notes: number(0...3) == 0 ? sentence(number(5...20)) : nil,
            isFavorite: number(0...9) == 0, rating: number(0...5))
    }
}
