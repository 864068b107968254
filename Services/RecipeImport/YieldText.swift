import Foundation

/// How a recipe's yield is read (docs/IMPORT.md, "Yield"): the text stays as the page wrote it, and from
/// it come a count and the thing counted.
///
/// - The count is the first number; for a range ("10-12 blondies", "4 to 6") it is the upper end,
///   what the recipe makes at most. A number right after the count is a size, not a second count
///   ("1 9x13” loaf", "4 1.25 cups").
/// - The thing counted is the first word after the count, read through sizes and shapes ("2-layer",
///   "9”", "large"): a known thing is written in the singular or plural the count asks for ("1 loaf",
///   "32 cookies", "2 pies" for "2 Pie Crusts"); people, persons and portions in any of the languages
///   read are servings; an unknown word is kept as written ("40 falafel"); none is servings ("Serves 4").
/// - The servings number of the recipe is the count.
struct YieldText: Equatable {
    var count: Double
    /// The lower end of a range ("10" of "10-12"); the count otherwise.
    var low: Double? = nil
    /// The thing counted as the count asks for it ("cookies"), or nil for servings.
    var thing: String?
    /// True when the text only says how many it makes ("Makes 6"), naming nothing.
    var unnamed = false

    /// The derived forms, best first: "32 cookies", then "32 servings" (and "6 items" for an unnamed count;
    /// for a range, the servings of its lower end last: "4 to 6 people" → "6 servings", "4 servings").
    var forms: [String] {
        func text(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(value) }
        let number = text(count)
        var forms: [String] = []
        if let thing { forms.append("\(number) \(thing)") }
        if unnamed { forms.append("\(number) \(count == 1 ? "item" : "items")") }
        forms.append("\(number) \(count == 1 ? "serving" : "servings")")
        if let low, low < count { forms.append("\(text(low)) \(low == 1 ? "serving" : "servings")") }
        return forms
    }

    /// Singular → plural of the things recipes make.
    static let things: [String: String] = [
        "loaf": "loaves", "pie": "pies", "cake": "cakes", "cupcake": "cupcakes", "muffin": "muffins", "cookie": "cookies", "bar": "bars",
        "slice": "slices", "piece": "pieces", "cup": "cups", "roll": "rolls", "bun": "buns", "scone": "scones", "tortilla": "tortillas",
        "ball": "balls", "layer": "layers", "can": "cans", "jar": "jars", "quart": "quarts", "pint": "pints", "gallon": "gallons",
        "batch": "batches", "dozen": "dozen", "sandwich": "sandwiches", "pizza": "pizzas", "bowl": "bowls", "glass": "glasses",
        "bottle": "bottles", "patty": "patties", "burger": "burgers", "taco": "tacos", "wrap": "wraps", "skewer": "skewers",
        "pancake": "pancakes", "waffle": "waffles", "biscuit": "biscuits", "brownie": "brownies", "blondie": "blondies",
        "square": "squares", "donut": "donuts", "doughnut": "doughnuts", "bagel": "bagels", "tart": "tarts", "tartlet": "tartlets",
        "dumpling": "dumplings", "meatball": "meatballs", "truffle": "truffles", "crepe": "crepes", "popsicle": "popsicles",
        "serving": "servings", "portion": "portions", "pizzelle": "pizzelles", "crust": "crusts", "galette": "galettes",
        "quiche": "quiches", "flatbread": "flatbreads", "baguette": "baguettes", "wing": "wings", "egg": "eggs", "cracker": "crackers",
        "macaron": "macarons", "madeleine": "madeleines", "bite": "bites", "cube": "cubes", "bread": "breads", "tablespoon": "tablespoons",
        "teaspoon": "teaspoons", "ounce": "ounces", "pound": "pounds", "liter": "liters", "litre": "litres", "gram": "grams",
    ]
    /// Words that mean servings (people, persons, portions), in the languages the importer reads.
    static let servingWords: Set<String> = [
        "serving", "servings", "serves", "serve", "people", "persons", "person", "portion", "portions", "pax", "guests", "adults",
        "personen", "person", "portionen", "portion", "pers", "personnes", "personne", "parts", "part", "couverts", "porciones",
        "porción", "personas", "raciones", "porzioni", "porzione", "persone", "personen", "porties", "portie", "personer", "portioner",
        "porcje", "porcji", "osób", "osoby", "adag", "főre", "porce", "porcí", "pessoas", "porções", "porcoes", "人份", "人",
    ]
    /// Words before the count that say it makes things without naming them ("Makes 6").
    static let makesWords: Set<String> = ["makes", "make", "yields", "yield", "ergibt", "für", "pour", "para", "per", "voor", "för"]

    /// Reads `text`; nil when it holds no number.
    static func read(_ text: String) -> YieldText? {
        let tokens = text.split(whereSeparator: { $0.isWhitespace })
        guard let first = tokens.firstIndex(where: { number(in: $0) != nil }) else { return nil }
        let written = number(in: tokens[first])!
        var count = written.high
        let low = written.low
        var index = tokens.index(after: first)
        // "10 to 12", "10 - 12", "10 à 12", "10 bis 12".
        if index + 1 < tokens.endIndex, ["to", "-", "–", "—", "or", "à", "a", "bis", "tot", "till", "do"].contains(tokens[index].lowercased()),
           let upper = number(in: tokens[index + 1]), upper.low >= count {
            count = upper.high
            index += 2
        }
        guard count > 0, count < 100_000 else { return nil }
        let before = tokens[..<first].map { $0.lowercased().trimmingCharacters(in: .punctuationCharacters) }
        // The words naming what is counted: after the count, through sizes and shapes, up to a parenthesis or comma.
        var words: [String] = []
        for token in tokens[index...].prefix(6) {
            if token.hasPrefix("(") && !words.isEmpty { break }
            var word = token.lowercased().trimmingCharacters(in: .punctuationCharacters.union(.symbols))
            if word.isEmpty || number(in: Substring(word)) != nil && !word.contains(where: \.isLetter) { continue }
            if word.contains("-") { word = String(word.split(separator: "-").last ?? "") }
            if word.contains(where: \.isNumber) { continue } // 9x13, 10"
            if ["large", "small", "medium", "big", "mini", "extra", "about", "approximately", "approx", "ca", "x", "inch", "in", "cm",
                "round", "whole", "standard", "regular", "jumbo"].contains(word) { continue }
            words.append(word)
            if token.hasSuffix(",") || words.count == 3 { break }
        }
        // A known thing among them names it ("1 Bundt Cake" → cake); servings words make it servings; else the first word as written.
        for word in words {
            if servingWords.contains(word) || word.hasPrefix("serving") || word.hasPrefix("portion") { return YieldText(count: count, low: low, thing: nil) }
            if let plural = things[word] { return YieldText(count: count, low: low, thing: count == 1 ? word : plural) }
            if let singular = things.first(where: { $0.value == word })?.key { return YieldText(count: count, low: low, thing: count == 1 ? singular : word) }
        }
        if let word = words.first, word.allSatisfy(\.isLetter), word.count >= 3 { return YieldText(count: count, low: low, thing: word) }
        let unnamed = before.contains { makesWords.contains($0) }
        return YieldText(count: count, low: low, thing: nil, unnamed: unnamed)
    }

    /// A count in a token: "12", "1.5", "1,5", "½", "10-12" (its range), "4x".
    static func number(in token: Substring) -> (low: Double, high: Double)? {
        let fractions: [Character: Double] = ["½": 0.5, "¼": 0.25, "¾": 0.75, "⅓": 1.0 / 3, "⅔": 2.0 / 3]
        if token.count == 1, let value = fractions[token.first!] { return (value, value) }
        let parts = token.split(whereSeparator: { "-–—/".contains($0) })
        func value(_ part: Substring) -> Double? {
            let digits = part.prefix { $0.isNumber || $0 == "." || $0 == "," }.replacingOccurrences(of: ",", with: ".")
            guard !digits.isEmpty, digits.first!.isNumber else { return nil }
            return Double(digits)
        }
        guard let low = parts.first.flatMap(value) else { return nil }
        if token.contains("/") { return nil } // a fraction or a date, not a count
        if parts.count == 2, let high = value(parts[1]), high >= low { return (low, high) }
        return (low, low)
    }
}
