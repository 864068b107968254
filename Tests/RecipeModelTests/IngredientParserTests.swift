import Foundation
@testable import RecipeModel
import TestThreads
import TestRandom
import Testing

@Suite("Ingredient lines", .onOwnThread)
struct IngredientParserTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let line: String
        let expected: ParsedIngredient
        var testDescription: String { line }
    }

    static let cases: [Case] = [
        Case(line: "2 cups diced tomatoes", expected: .init(quantity: 2, unit: "cup", food: "tomato", note: "diced")),
        Case(line: "½ tsp salt", expected: .init(quantity: 0.5, unit: "tsp", food: "salt")),
        Case(line: "1 1/2 cups flour", expected: .init(quantity: 1.5, unit: "cup", food: "flour")),
        Case(line: "1½ cups sugar", expected: .init(quantity: 1.5, unit: "cup", food: "sugar")),
        Case(line: "1-2 onions, finely chopped", expected: .init(quantity: 1, quantityMax: 2, food: "onion", note: "finely chopped")),
        Case(line: "1 to 2 tbsp olive oil", expected: .init(quantity: 1, quantityMax: 2, unit: "tbsp", food: "olive oil")),
        Case(line: "400g spaghetti", expected: .init(quantity: 400, unit: "g", food: "spaghetti")),
        Case(line: "2 cloves garlic, minced", expected: .init(quantity: 2, unit: "clove", food: "garlic", note: "minced")),
        Case(line: "3 large eggs", expected: .init(quantity: 3, food: "egg", note: "large")),
        Case(line: "1 cup of rice", expected: .init(quantity: 1, unit: "cup", food: "rice")),
        Case(line: "a pinch of salt", expected: .init(quantity: 1, unit: "pinch", food: "salt")),
        Case(line: "salt and black pepper", expected: .init(food: "salt black pepper", note: "and")),
        Case(line: "Fresh basil leaves (for garnish)", expected: .init(food: "basil leaf", note: "fresh, for garnish")),
        Case(line: "0.5 l chicken stock", expected: .init(quantity: 0.5, unit: "l", food: "chicken stock")),
        Case(line: "1,5 kg potatoes", expected: .init(quantity: 1.5, unit: "kg", food: "potato")),
        Case(line: "8 oz cherries, pitted", expected: .init(quantity: 8, unit: "oz", food: "cherry", note: "pitted")),
        Case(line: "4 whole cloves", expected: .init(quantity: 4, food: "clove", note: "whole")),
        Case(line: "2 anchovies", expected: .init(quantity: 2, food: "anchovy")),
        Case(line: "1 (15 oz) can black beans, drained", expected: .init(quantity: 1, unit: "can", food: "black bean", note: "15 oz, drained")),
        Case(line: "¾ cup sour cream", expected: .init(quantity: 0.75, unit: "cup", food: "sour cream")),
        Case(line: "2 tbsp extra-virgin olive oil", expected: .init(quantity: 2, unit: "tbsp", food: "olive oil", note: "extra-virgin")),
    ]

    @Test("lines parse into quantity, unit, food and note", arguments: cases)
    func parses(testCase: Case) {
        #expect(IngredientParser.parse(testCase.line) == testCase.expected)
    }

    @Test("the text as written is kept beside the parse")
    func keepsText() {
        let line = IngredientLine(text: "2 cups diced tomatoes")
        #expect(line.text == "2 cups diced tomatoes")
        #expect(line.food == "tomato")
    }

    @Test("food names normalize to lowercase singular words")
    func normalizes() {
        #expect(IngredientParser.normalizeFood("Cherry Tomatoes") == "cherry tomato")
        #expect(IngredientParser.normalizeFood("  Chickpeas ") == "chickpea")
        #expect(IngredientParser.normalizeFood("hummus") == "hummus")
        #expect(IngredientParser.normalizeFood("Spring Onions") == "spring onion")
        #expect(IngredientParser.normalizeFood("leaves") == "leaf")
    }
}

@Suite("Durations and scaling", .onOwnThread)
struct DurationAndScalingTests {
    @Test("ISO 8601 durations read as minutes", arguments: [
        ("PT15M", 15), ("PT1H15M", 75), ("PT2H", 120), ("P1DT2H", 1_560), ("PT90S", 2), ("PT0M", 0), ("pt45m", 45), ("PT1.5H", 90),
    ])
    func minutes(text: String, minutes: Int) {
        #expect(ISODuration.minutes(text) == minutes)
    }

    @Test("text that is not a duration reads as nothing", arguments: ["", "15 minutes", "P", "PT", "PT15", "T15M", "PT15X"])
    func notDurations(text: String) {
        #expect(ISODuration.minutes(text) == nil)
    }

    @Test("minutes write back as ISO 8601")
    func writes() {
        #expect(ISODuration.text(minutes: 75) == "PT1H15M")
        #expect(ISODuration.text(minutes: 45) == "PT45M")
        #expect(ISODuration.text(minutes: 120) == "PT2H")
        #expect(ISODuration.text(minutes: 0) == "PT0M")
        #expect(ISODuration.minutes(ISODuration.text(minutes: 1_561)) == 1_561)
    }

    @Test("total time is derived from prep + cook when missing")
    func totalTime() {
        let recipe = Recipe(name: "x", prepTime: "PT10M", cookTime: "PT20M")
        #expect(recipe.totalMinutes == 30)
        let written = Recipe(name: "x", prepTime: "PT10M", cookTime: "PT20M", totalTime: "PT45M")
        #expect(written.totalMinutes == 45)
    }

    @Test("quantities scale and format as a cook writes them")
    func scaling() {
        let line = IngredientLine(text: "1-2 cups rice")
        let doubled = Scaling.scaled(line, by: 1.5)
        #expect(doubled.quantity == 1.5 && doubled.quantityMax == 3)
        #expect(Scaling.format(1.5) == "1 1/2")
        #expect(Scaling.format(1.0 / 3) == "1/3")
        #expect(Scaling.format(2) == "2")
        #expect(Scaling.format(0.999) == "1")
        #expect(Scaling.format(12.5) == "12.5")
    }

    @Test("a scaled line changes exactly the amount the parse read, and keeps the rest as written", arguments: [
        ("1 to 2 tsp salt", "2-4 tsp salt"),
        ("1/2 to 3/4 cup water", "1-1 1/2 cups water"),
        ("2 or 3 eggs", "4-6 eggs"),
        ("1-2 tbsp oil", "2-4 tbsp oil"),
        ("2–3 cloves garlic", "4-6 cloves garlic"),
        ("1 1/2 - 2 cups flour", "3-4 cups flour"),
        ("400g butter", "800g butter"),
        ("1½ cups milk", "3 cups milk"),
        ("1 ½ cups cream", "3 cups cream"),
        ("3 eggs, beaten", "6 eggs, beaten"),
        ("1 (14 oz) can beans", "2 (14 oz) cans beans"),
        ("(optional) 2 tbsp capers", "(optional) 4 tbsp capers"),
        ("  3 cloves", "  6 cloves"),
        ("1⁄2 cup oats", "1 cup oats"),
        ("a pinch of salt", "2 × a pinch of salt"),
        ("salt to taste", "salt to taste"),
    ])
    func scaledText(line: String, doubled: String) {
        #expect(Scaling.text(of: Scaling.scaled(IngredientLine(text: line), by: 2)) == doubled)
    }

    @Test("a scaled line's other amounts scale with it, its words agree with the new number, and sizes stay", arguments: scaledCases)
    func scaledAmounts(line: String, factor: Double, scaled: String) {
        #expect(Scaling.text(of: Scaling.scaled(IngredientLine(text: line), by: factor)) == scaled)
    }

    static let scaledCases: [(String, Double, String)] = [
        ("1 cup (240 ml) milk", 2.0, "2 cups (480 ml) milk"),
        ("12 oz / 340 g spaghetti", 2, "24 oz / 680 g spaghetti"),
        ("12 oz/340g spaghetti", 2, "24 oz/680g spaghetti"),
        ("2 tbsp butter, plus 1 tbsp for the pan", 2, "4 tbsp butter, plus 2 tbsp for the pan"),
        ("1 tbsp + 1 tsp sugar", 3, "3 tbsp + 3 tsp sugar"),
        ("2 large eggs (about 100 g)", 1.5, "3 large eggs (about 150 g)"),
        ("1/2 cup (1 stick) butter", 2, "1 cup (2 sticks) butter"),
        ("1 1/2 cups (360 ml) water", 0.5, "3/4 cup (180 ml) water"),
        ("about 2 cups flour", 2, "about 4 cups flour"),
        ("a scant 1/2 cup sugar", 2, "a scant 1 cup sugar"),
        ("approx. 400 g potatoes", 0.5, "approx. 200 g potatoes"),
        ("1 egg", 2, "2 eggs"),
        ("1 EGG", 2, "2 EGGS"),
        ("2 eggs, beaten", 0.5, "1 egg, beaten"),
        ("1 large onion, diced", 3, "3 large onions, diced"),
        ("3 bay leaves", 1.0 / 3, "1 bay leaf"),
        ("1 clove garlic", 2, "2 cloves garlic"),
        ("1 Tablespoon honey", 2, "2 Tablespoons honey"),
        ("1 onion or shallot", 2, "2 onions or shallot"),
        ("400g butter", 2.0 / 3, "267g butter"),
        // Sizes of one item or container stay.
        ("1 (14 oz) can beans", 2, "2 (14 oz) cans beans"),
        ("1 can (14 oz) tomatoes", 2, "2 cans (14 oz) tomatoes"),
        ("2 14-oz cans chickpeas", 2, "4 14-oz cans chickpeas"),
        ("4 salmon fillets (6 oz each)", 0.5, "2 salmon fillets (6 oz each)"),
        ("1 (3 lb) chicken", 2, "2 (3 lb) chickens"),
        ("2 x 400g tins tomatoes", 2, "4 x 400g tins tomatoes"),
        // What is no amount of the food, and words of other languages, stay as written.
        ("2 cups milk (2%)", 2, "4 cups milk (2%)"),
        ("1 lb beef, cut into 2 inch pieces", 2, "2 lb beef, cut into 2 inch pieces"),
        ("1 Zwiebel", 2, "2 Zwiebel"),
        ("2 Eier", 0.5, "1 Eier"),
    ]

    @Test("a rough amount is read after the word that says so, and parsed as any other")
    func roughAmounts() {
        #expect(IngredientParser.parse("about 2 cups flour") == ParsedIngredient(quantity: 2, unit: "cup", food: "flour"))
        #expect(IngredientParser.parse("a scant 1/2 cup sugar") == ParsedIngredient(quantity: 0.5, unit: "cup", food: "sugar"))
        #expect(IngredientParser.parse("Approx. 400 g potatoes, peeled") == ParsedIngredient(quantity: 400, unit: "g", food: "potato", note: "peeled"))
        // Not followed by a number, the word is the food's as before.
        #expect(IngredientParser.parse("about a handful of basil").quantity == nil)
        #expect(IngredientParser.amount(in: "about 2 cups flour")?.scalars == 6..<7)
    }

    @Test("the amount's place in a line is found whatever stands before and after it (2,000 generated lines)")
    func amountPlace() {
        var random = SplitMix(seed: 20_261_127)
        func pick<T>(_ items: [T]) -> T { items[random.below(items.count)] }
        // (text, value) of a single amount; mixed numbers only as the low end, as people write ranges.
        func single(mixedAllowed: Bool) -> (String, Double) {
            let whole = 1 + random.below(12)
            switch random.below(mixedAllowed ? 7 : 5) {
            case 0: return ("\(whole)", Double(whole))
            case 1: return ("\(whole).5", Double(whole) + 0.5)
            case 2: return ("\(whole),25", Double(whole) + 0.25)
            case 3: return (pick(["1/2", "3/4", "1⁄3"]), 0) // value checked below only for the others
            case 4: return (pick(["½", "¾", "\(whole)½"]), 0)
            case 5: return ("\(whole) 1/2", Double(whole) + 0.5)
            default: return ("\(whole) ¼", Double(whole) + 0.25)
            }
        }
        for round in 0..<2_000 {
            let (low, lowValue) = single(mixedAllowed: true)
            var amount = low, expectedHigh: Double?
            if random.below(2) == 0 {
                let (high, highValue) = single(mixedAllowed: false)
                amount += pick(["-", "–", " - ", " to ", " or "]) + high
                expectedHigh = highValue
            }
            let before = pick(["", " ", "\t", "(optional) ", "\u{200B}", "  (big)  "])
            let glued = amount.last!.isNumber && !amount.contains(" ") && random.below(3) == 0
            let after = glued ? pick(["g butter", "ml milk"]) : pick([" tbsp flour", " g sugar, sifted", " (14 oz) pkg beans", " tsp salt", " oz", ""])
            let line = before + amount + after
            guard let found = IngredientParser.amount(in: line) else {
                Issue.record("round \(round): no amount in \(line.debugDescription)")
                continue
            }
            let start = before.unicodeScalars.count
            #expect(found.scalars == start..<(start + amount.unicodeScalars.count), "round \(round): \(line.debugDescription)")
            if lowValue > 0 { #expect(abs(found.quantity - lowValue) < 1e-9, "round \(round): \(line.debugDescription)") }
            if let expectedHigh, expectedHigh > 0 { #expect(found.quantityMax.map { abs($0 - expectedHigh) < 1e-9 } == true, "round \(round): \(line.debugDescription)") }
            let scaled = Scaling.text(of: Scaling.scaled(IngredientLine(text: line), by: 3))
            #expect(scaled.hasPrefix(before) && scaled.hasSuffix(after), "round \(round): \(line.debugDescription) → \(scaled.debugDescription)")
        }
    }
}

@Suite("Trimming as Foundation trims", .onOwnThread)
struct TrimmingTests {
    @Test("every scalar is trimmed exactly when Foundation's character sets say so")
    func everyScalar() {
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            #expect(String.isTrimmed(scalar, newlines: true) == CharacterSet.whitespacesAndNewlines.contains(scalar), "U+\(String(value, radix: 16))")
            #expect(String.isTrimmed(scalar, newlines: false) == CharacterSet.whitespaces.contains(scalar), "U+\(String(value, radix: 16))")
            #expect(String.isPunctuation(scalar) == CharacterSet.punctuationCharacters.contains(scalar), "U+\(String(value, radix: 16))")
        }
    }

    @Test("texts trim the same way", arguments: ["", " ", "  a b  ", "\t\n x\u{2028}", "\u{3000}é\u{00A0}", " \u{301}a", "a\u{85}", "\u{1C}x\u{1F}", "(salt).", "«¡hola!»", "--"])
    func texts(_ text: String) {
        #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(text.trimmingWhitespace(newlines: false) == text.trimmingCharacters(in: .whitespaces))
        #expect(text.trimmingPunctuation() == text.trimmingCharacters(in: .punctuationCharacters))
    }
}
