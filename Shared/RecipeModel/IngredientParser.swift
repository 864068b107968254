import Foundation

/// What an ingredient line says, read into parts: "2 cups diced tomatoes" →
/// quantity 2, unit "cup", food "tomato", note "diced". The text as written is
/// always kept beside it; the parse only helps matching and scaling.
public struct ParsedIngredient: Codable, Sendable, Equatable {
    /// The amount, or the low end of a range ("1-2" → 1).
    public var quantity: Double?
    /// The high end of a range ("1-2" → 2).
    public var quantityMax: Double?
    /// The canonical unit ("cup", "tbsp", "g"…), if the line has one.
    public var unit: String?
    /// The normalized food name: lowercase, singular, without preparation words.
    public var food: String
    /// Preparation and other remarks ("diced", "finely chopped, to taste").
    public var note: String?

    /// A parse result.
    public init(quantity: Double? = nil, quantityMax: Double? = nil, unit: String? = nil, food: String, note: String? = nil) {
        self.quantity = quantity
        self.quantityMax = quantityMax
        self.unit = unit
        self.food = food
        self.note = note
    }
}

/// What of an ingredient line changes with its amount, and where it stands: unicode scalar offsets in the line.
public struct AmountPlaces: Sendable, Equatable {
    /// Another amount in the line, with its unit: "(240 ml)", "/ 340 g", "plus 1 tbsp", or a size ("(14 oz) can").
    public struct Measure: Sendable, Equatable {
        public var quantity: Double
        public var quantityMax: Double?
        /// The number, or the range ("240", "240-250").
        public var scalars: Range<Int>
        /// The unit as written ("ml", "sticks").
        public var unitWord: Range<Int>
        /// The size of one item or container ("1 can (14 oz)", "1 (3 lb) chicken", "6 oz each"): the same whatever
        /// the number of items.
        public var isSize = false
    }

    /// The line's amount (the low end of a range).
    public var quantity: Double
    /// The high end of the amount's range.
    public var quantityMax: Double?
    /// Where the amount stands ("1 to 2").
    public var scalars: Range<Int>
    /// The word after the amount that agrees with it in number: the unit as written ("cup"), or for a count with no
    /// unit the food's last word ("eggs").
    public var numberWord: Range<Int>?
    /// The other amounts in the line, in order.
    public var measures: [Measure]
}

/// Reads ingredient lines as people write them.
public enum IngredientParser {
    /// The largest quantity a line may give; a larger number is out of range, not a quantity.
    public static let maxQuantity = 1_000_000.0

    /// Parses one line.
    public static func parse(_ line: String) -> ParsedIngredient {
        read(line).parsed
    }

    /// Words that say an amount is rough, standing before it: "about 2 cups", "a scant 1/2 cup", "approx. 400 g".
    public static let approximations: Set<String> = [
        "about", "approx", "approximately", "around", "roughly", "circa", "ca", "scant", "heaping", "heaped",
        "generous", "rounded", "level", "nearly", "almost", "just",
    ]

    /// The number at the start of `line` that is too large to be a quantity ("999…9 cups"), if any.
    public static func outOfRangeQuantity(_ line: String) -> String? {
        // Over 1,000,000 takes seven digits, or an exponent after a digit: most lines have neither and are not parsed.
        var digits = 0, exponent = false, previousIsDigit = false
        for scalar in line.unicodeScalars {
            let isDigit = (scalar.value >= 0x30 && scalar.value <= 0x39) || (scalar.value > 0x7F && scalar.properties.numericType != nil)
            if isDigit { digits += 1 }
            if previousIsDigit && (scalar == "e" || scalar == "E") { exponent = true }
            previousIsDigit = isDigit
        }
        guard digits >= 7 || exponent else { return nil }
        return read(line).outOfRange
    }

    /// Where the amount stands in `line` and what it says: "1 to 2 tsp salt" → 1, 2, and the unicode scalars 0..<6
    /// ("1 to 2"). Nil when the line starts with no number ("a pinch of salt", "salt to taste"). What scaling
    /// replaces, so a scaled line changes exactly what the parse read as its amount.
    public static func amount(in line: String) -> (quantity: Double, quantityMax: Double?, scalars: Range<Int>)? {
        let reading = read(line)
        guard let quantity = reading.parsed.quantity, let scalars = reading.amountScalars else { return nil }
        return (quantity, reading.parsed.quantityMax, scalars)
    }

    /// Everything in a line whose words change with its amount, and where it stands (unicode scalar offsets in
    /// `line`): the amount, the word after it that agrees with it in number (the unit as written, "cup" or "cups", or
    /// for a count with no unit the food, "egg" or "eggs") and the other amounts that measure the same food ("(240 ml)",
    /// "/ 340 g", "plus 1 tbsp"). Nil when the line starts with no number. What scaling rewrites.
    public static func amountPlaces(in line: String) -> AmountPlaces? {
        let reading = read(line)
        guard let quantity = reading.parsed.quantity, let scalars = reading.amountScalars else { return nil }
        let containerUnit = reading.parsed.unit.map(Units.containers.contains) ?? false
        let measures = Self.measures(in: line).compactMap { found -> AmountPlaces.Measure? in
            guard found.measure.scalars.lowerBound != scalars.lowerBound else { return nil }
            var measure = found.measure
            // The size of one item or container, not an amount of the food: "1 can (14 oz)", "1 (3 lb) chicken",
            // "2 14-oz cans", "4 fillets (6 oz each)".
            measure.isSize = containerUnit || found.beforeContainerOrEach
                || (reading.parsed.unit == nil && found.followsAmountEndingAt == scalars.upperBound)
            return measure
        }
        return AmountPlaces(quantity: quantity, quantityMax: reading.parsed.quantityMax, scalars: scalars,
                            numberWord: reading.unitScalars ?? reading.nounScalars, measures: measures)
    }

    /// The word for `word` in the other number, when it is a unit or a countable food written out in English
    /// ("cup" → "cups", "leaves" → "leaf", "Eggs" → "Egg"); nil for any other word, and for abbreviations ("tbsp", "g"),
    /// which stay as written. The letter case follows the word's.
    public static func numberForm(of word: String, plural: Bool) -> String? {
        let lower = word.lowercased()
        guard let form = plural ? NumberForms.plural[lower] : NumberForms.singular[lower] else {
            return nil
        }
        if word == word.uppercased() && word != lower { return form.uppercased() }
        if let first = word.first, first.isUppercase { return form.prefix(1).uppercased() + form.dropFirst() }
        return form
    }

    /// Whether an amount reads in the plural in English: more than one, or a range that reaches past one.
    public static func isPlural(_ quantity: Double, _ quantityMax: Double?) -> Bool {
        (quantityMax ?? quantity) > 1
    }

    /// Every "number unit" in `line`, wherever it stands; with what stands after it.
    private static func measures(in line: String) -> [(measure: AmountPlaces.Measure, beforeContainerOrEach: Bool, followsAmountEndingAt: Int?)] {
        // Brackets and signs, and a slash or comma that stands outside a number, part words here ("(240 ml)",
        // "12 oz/340 g", "1 tbsp + 1 tsp"): each becomes a space, so every place in the text is its place in `line`.
        let scalars = Array(line.unicodeScalars)
        func isDigit(_ index: Int) -> Bool {
            index >= 0 && index < scalars.count && scalars[index].properties.numericType != nil
        }
        var view = String.UnicodeScalarView()
        for (index, scalar) in scalars.enumerated() {
            switch scalar {
            case "(", ")", "[", "]", ";", ":", "+", "=", "~", "\u{2248}": view.append(" ")
            case "/", ",", "\u{2044}": view.append(isDigit(index - 1) && isDigit(index + 1) ? scalar : " ")
            default: view.append(scalar)
            }
        }
        let text = String(view)
        var tokens = Tokens(text)
        func offset(_ index: String.Index) -> Int { text.unicodeScalars.distance(from: text.unicodeScalars.startIndex, to: index) }
        var found: [(measure: AmountPlaces.Measure, beforeContainerOrEach: Bool, followsAmountEndingAt: Int?)] = []
        var start = 0
        while start < tokens.count {
            tokens.index = start
            let (low, high) = tokens.readAmount()
            guard let low, low.isFinite else {
                start += 1
                continue
            }
            let amountEnd = tokens.index
            let amount = offset(tokens.places[start].lowerBound)..<offset(tokens.places[amountEnd - 1].upperBound)
            if tokens.index < tokens.count, tokens.words[tokens.index] == "-" { tokens.index += 1 } // "14-oz"
            let unitStart = tokens.index
            guard tokens.readUnit() != nil else {
                start = amountEnd
                continue
            }
            let unitWord = offset(tokens.places[unitStart].lowerBound)..<offset(tokens.places[tokens.index - 1].upperBound)
            let next = tokens.index < tokens.count ? tokens.words[tokens.index].lowercased() : ""
            let beforeContainer = Units.containers.contains(Units.canonical(next) ?? "") || Units.containerWords.contains(next)
                || ["each", "apiece"].contains(next)
            // The amount just before this one, when nothing but spaces and brackets stands between them.
            let follows = start > 0 && Fractions.value(tokens.words[start - 1]) != nil
                ? offset(tokens.places[start - 1].upperBound) : nil
            found.append((AmountPlaces.Measure(quantity: low, quantityMax: high, scalars: amount, unitWord: unitWord),
                          beforeContainer, follows))
            start = tokens.index
        }
        return found
    }

    private struct Reading {
        var parsed: ParsedIngredient
        var outOfRange: String?
        var amountScalars: Range<Int>?
        /// The unit as written ("cups"), for an amount with a unit.
        var unitScalars: Range<Int>?
        /// The food's last word ("eggs" in "3 large eggs, beaten"), for an amount with no unit.
        var nounScalars: Range<Int>?
    }

    private static func read(_ line: String) -> Reading {
        // Every step below keeps each unicode scalar where it was, or drops a tail, so a word's place in `text` is its
        // place in `line` after the scalars trimmed from the start.
        let trimmedAtStart = line.unicodeScalars.prefix { String.isTrimmed($0, newlines: true) }.count
        var text = line.trimmingWhitespace()
        if text.unicodeScalars.contains("\u{2044}") { // fraction slash
            text = String(String.UnicodeScalarView(text.unicodeScalars.map { $0 == "\u{2044}" ? "/" : $0 }))
        }
        var notes: [String] = []

        // Parenthesised remarks and everything after the first comma are notes. A remark is blanked (a space for each
        // of its scalars), which the words below read as a removal.
        while let open = text.firstIndex(of: "("), let close = text[open...].firstIndex(of: ")") {
            let inside = String(text[text.index(after: open)..<close]).trimmingWhitespace(newlines: false)
            if !inside.isEmpty { notes.append(inside) }
            let blank = String(repeating: " ", count: text.unicodeScalars[open...close].count)
            text.replaceSubrange(open...close, with: blank)
        }
        if let comma = Self.noteComma(in: text) {
            let after = String(text[text.index(after: comma)...]).trimmingWhitespace(newlines: false)
            if !after.isEmpty { notes.append(after) }
            text = String(text[..<comma])
        }

        var scanner = Tokens(text)
        var (quantity, quantityMax) = scanner.readQuantity()
        func scalarsInLine(_ range: Range<String.Index>) -> Range<Int> {
            let scalars = text.unicodeScalars
            let start = scalars.distance(from: scalars.startIndex, to: range.lowerBound) + trimmedAtStart
            return start..<(start + scalars.distance(from: range.lowerBound, to: range.upperBound))
        }
        let amountScalars = scanner.amount.map(scalarsInLine)
        if quantity == nil, scanner.skipArticle() { quantity = 1 }
        var unit: String?
        let unitStart = scanner.index
        if quantity != nil || scanner.peekIsUnit {
            unit = scanner.readUnit()
        }
        var unitScalars = unit == nil ? nil : scalarsInLine(scanner.places[unitStart].lowerBound..<scanner.places[scanner.index - 1].upperBound)
        scanner.skip(words: ["of"])

        var foodWords: [String] = []
        var preparation: [String] = []
        // The food's last word before anything else begins ("2 eggs plus 1 yolk", "1 onion or shallot"): a count
        // with no unit agrees with it.
        var nounScalars: Range<Int>?
        var nounEnded = false
        for (word, place) in zip(scanner.remainingWords, scanner.remainingPlaces) {
            let lower = word.lowercased().trimmingPunctuation()
            guard !lower.isEmpty else { continue }
            if nounEnded || Fractions.value(lower) != nil || ["or", "and", "plus", "with", "for", "to", "in", "&"].contains(lower) {
                nounEnded = true
            } else if !descriptors.contains(lower), word.unicodeScalars.allSatisfy(\.properties.isAlphabetic) {
                nounScalars = scalarsInLine(place)
            }
            if descriptors.contains(lower) {
                preparation.append(lower)
            } else {
                foodWords.append(lower)
            }
        }
        if foodWords.isEmpty, let unitWord = scanner.lastUnitWord {
            // "4 whole cloves": the unit word was the food.
            foodWords = [unitWord.lowercased()]
            unit = nil
            nounScalars = unitScalars
            unitScalars = nil
        }
        if foodWords.isEmpty, let last = preparation.popLast() { foodWords = [last] }
        let food = normalizeFood(foodWords.joined(separator: " "))
        let note = (preparation.isEmpty ? [] : [preparation.joined(separator: " ")]) + notes
        return Reading(
            parsed: ParsedIngredient(quantity: quantity, quantityMax: quantityMax, unit: unit, food: food,
                                     note: note.isEmpty ? nil : note.joined(separator: ", ")),
            outOfRange: scanner.outOfRange, amountScalars: amountScalars,
            unitScalars: unitScalars, nounScalars: unit == nil && quantity != nil ? nounScalars : nil)
    }

    /// The first comma that separates a note, not one inside a number ("1,5 kg").
    private static func noteComma(in text: String) -> String.Index? {
        var index = text.startIndex
        while let comma = text[index...].firstIndex(of: ",") {
            let before = comma > text.startIndex ? text[text.index(before: comma)] : " "
            let afterIndex = text.index(after: comma)
            let after = afterIndex < text.endIndex ? text[afterIndex] : " "
            if !(before.isNumberQuick && after.isNumberQuick) { return comma }
            index = afterIndex
        }
        return nil
    }

    /// The normalized form of a food name: lowercase, trimmed, single spaces, each word singular.
    public static func normalizeFood(_ name: String) -> String {
        name.lowercased()
            .split(whereSeparator: \.isWhitespaceQuick)
            .map { singular(String($0).trimmingPunctuation()) }
            .filter { !$0.isEmpty }
            .joined(separator: " ")
    }

    /// The singular of an English food word: "tomatoes" → "tomato", "cherries" → "cherry".
    static func singular(_ word: String) -> String {
        if let irregular = irregularSingulars[word] { return irregular }
        if uncountable.contains(word) || word.count <= 3 { return word }
        if word.hasSuffix("ss") || word.hasSuffix("us") || word.hasSuffix("is") { return word }
        if word.hasSuffix("ies") { return String(word.dropLast(3)) + "y" }
        if word.hasSuffix("oes") { return String(word.dropLast(2)) }
        if word.hasSuffix("ches") || word.hasSuffix("shes") || word.hasSuffix("xes") || word.hasSuffix("sses") {
            return String(word.dropLast(2))
        }
        if word.hasSuffix("s") { return String(word.dropLast()) }
        return word
    }

    private static let irregularSingulars: [String: String] = [
        "leaves": "leaf", "loaves": "loaf", "halves": "half", "knives": "knife",
        "anchovies": "anchovy", "cloves": "clove", "olives": "olive", "chives": "chives",
    ]

    private static let uncountable: Set<String> = [
        "molasses", "hummus", "couscous", "asparagus", "swiss", "grits", "oats", "greens",
        "chives", "brussels", "series",
    ]

    /// Words that say how a food is prepared or what size it is, not what it is.
    static let descriptors: Set<String> = [
        "diced", "chopped", "minced", "sliced", "grated", "shredded", "crushed", "peeled",
        "seeded", "halved", "quartered", "cubed", "julienned", "mashed", "beaten", "melted",
        "softened", "toasted", "roasted", "cooked", "uncooked", "drained", "rinsed", "packed",
        "sifted", "ground", "fresh", "freshly", "finely", "roughly", "coarsely", "thinly", "thickly",
        "large", "small", "medium", "extra", "extra-virgin", "big", "whole", "boneless", "skinless",
        "optional", "divided", "cold", "warm", "hot", "room", "temperature", "to", "taste", "for",
        "serving", "garnish", "about", "approximately", "and", "or", "plus", "more", "torn", "trimmed",
        "zested", "juiced", "lightly", "heaped", "level", "generous", "good", "quality", "day-old",
    ]
}

/// A cursor over the words of an ingredient line.
private struct Tokens {
    private(set) var words: [String]
    /// Where each word stands in the text it was read from.
    let places: [Range<String.Index>]
    var index = 0
    /// Where the quantity `readQuantity` read stands in the text ("1 to 2"), when it read one.
    private(set) var amount: Range<String.Index>?
    /// The word read as the unit, in case it turns out to be the food.
    private(set) var lastUnitWord: String?
    /// A number where a quantity stands that is too large to be one.
    private(set) var outOfRange: String?

    init(_ text: String) {
        let split = Tokens.split(text)
        words = split.map { String(text[$0]) }
        places = split
    }

    var count: Int { words.count }
    var remainingWords: ArraySlice<String> { words[index...] }
    var remainingPlaces: ArraySlice<Range<String.Index>> { places[index...] }

    var peekIsUnit: Bool {
        guard index < words.count else { return false }
        return Units.canonical(words[index]) != nil && !Units.ambiguousAlone.contains(words[index].lowercased())
    }

    /// Skips a leading "a"/"an" ("a pinch of salt"); `true` when there was one.
    mutating func skipArticle() -> Bool {
        guard index + 1 < words.count, ["a", "an"].contains(words[index].lowercased()),
              Units.canonical(words[index + 1]) != nil else { return false }
        index += 1
        return true
    }

    mutating func skip(words skipped: Set<String>) {
        while index < words.count, skipped.contains(words[index].lowercased()) { index += 1 }
    }

    /// Reads "2", "1 1/2", "1½", "½", "1.5", "1,5", "1-2", "1 to 2", "2x".
    mutating func readQuantity() -> (Double?, Double?) {
        let saved = index
        // "about 2 cups", "a scant 1/2 cup": the amount is the number after the word that says it is rough.
        func isApproximation(_ at: Int) -> Bool {
            at < words.count && IngredientParser.approximations.contains(words[at].lowercased().trimming { $0 == "." })
        }
        var skip = index
        if skip < words.count, ["a", "an"].contains(words[skip].lowercased()), isApproximation(skip + 1) { skip += 1 }
        if isApproximation(skip), skip + 1 < words.count, Fractions.value(words[skip + 1]) != nil { index = skip + 1 }
        let start = index
        let (low, high) = readAmount()
        guard low != nil else {
            index = saved
            return (nil, nil)
        }
        amount = places[start].lowerBound..<places[index - 1].upperBound
        return (low, high)
    }

    mutating func readAmount() -> (Double?, Double?) {
        guard let first = readNumber() else { return (nil, nil) }
        var low = first
        // "1 1/2": a whole number followed by a fraction.
        if first == first.rounded(), index < words.count, words[index].contains("/") || Fractions.isVulgar(words[index]),
           let fraction = Fractions.value(words[index]), fraction < 1 {
            low += fraction
            index += 1
        }
        // Ranges: "1-2" (already split into "1", "-", "2"), "1 to 2", "1 or 2".
        if index + 1 < words.count, ["-", "–", "—", "to", "or"].contains(words[index].lowercased()) {
            let saved = index
            index += 1
            if let high = readNumber() {
                return (low, high)
            }
            index = saved
        }
        return (low, nil)
    }

    private mutating func readNumber() -> Double? {
        guard index < words.count, let value = Fractions.value(words[index]) else { return nil }
        guard value.isFinite, value <= IngredientParser.maxQuantity else {
            // Not a quantity; the word stays part of the text, and validation can name it.
            if outOfRange == nil { outOfRange = String(words[index].prefix(40)) }
            return nil
        }
        index += 1
        return value
    }

    mutating func readUnit() -> String? {
        guard index < words.count else { return nil }
        // Two-word units first: "fl oz", "fluid ounces".
        if index + 1 < words.count, let unit = Units.canonical(words[index] + " " + words[index + 1]) {
            lastUnitWord = words[index + 1]
            index += 2
            return unit
        }
        guard let unit = Units.canonical(words[index]) else { return nil }
        lastUnitWord = words[index]
        index += 1
        return unit
    }

    /// Where the words stand in `text`, with numbers split from units ("400g" → "400", "g") and ranges from their
    /// ends ("1-2" → "1", "-", "2").
    static func split(_ text: String) -> [Range<String.Index>] {
        var result: [Range<String.Index>] = []
        for raw in text.split(whereSeparator: \.isWhitespaceQuick) {
            var word = raw
            // "1-2", "1–2"
            if let dash = word.firstIndex(where: { "-–—".contains($0) }), dash != word.startIndex,
               Fractions.value(String(word[..<dash])) != nil {
                let afterDash = word.index(after: dash)
                result.append(word.startIndex..<dash)
                result.append(dash..<afterDash)
                word = word[afterDash...]
                if word.isEmpty { continue }
            }
            // "400g", "1½cups", "2x"
            if let first = word.first, first.isNumberQuick || Fractions.isVulgar(first) {
                let numberEnd = word.firstIndex { !($0.isNumberQuick || $0 == "." || $0 == "," || $0 == "/" || Fractions.isVulgar($0)) }
                if let numberEnd, numberEnd != word.startIndex {
                    result.append(word.startIndex..<numberEnd)
                    result.append(numberEnd..<word.endIndex)
                    continue
                }
            }
            result.append(word.startIndex..<word.endIndex)
        }
        return result
    }
}

/// Numbers as recipes write them.
enum Fractions {
    private static let vulgar: [Character: Double] = [
        "½": 0.5, "⅓": 1.0 / 3, "⅔": 2.0 / 3, "¼": 0.25, "¾": 0.75, "⅕": 0.2, "⅖": 0.4, "⅗": 0.6,
        "⅘": 0.8, "⅙": 1.0 / 6, "⅚": 5.0 / 6, "⅛": 0.125, "⅜": 0.375, "⅝": 0.625, "⅞": 0.875,
    ]

    static func isVulgar(_ text: String) -> Bool {
        text.count == 1 && vulgar[text.first!] != nil
    }

    static func isVulgar(_ character: Character) -> Bool {
        character.asciiValue == nil && vulgar[character] != nil
    }

    /// "2" → 2, "1.5" / "1,5" → 1.5, "1/2" → 0.5, "½" → 0.5, "1½" → 1.5; anything else → nil.
    /// The value may be huge or infinite ("999…9"): callers bound it.
    static func value(_ text: String) -> Double? {
        guard !text.isEmpty else { return nil }
        if let last = text.last, let fraction = vulgar[last] {
            let whole = text.dropLast()
            if whole.isEmpty { return fraction }
            guard let number = Double(whole) else { return nil }
            return number + fraction
        }
        if let slash = text.firstIndex(of: "/") {
            guard let numerator = Double(text[..<slash]), let denominator = Double(text[text.index(after: slash)...]),
                  denominator != 0 else { return nil }
            return numerator / denominator
        }
        guard text.allSatisfy({ $0.isNumberQuick || $0 == "." || $0 == "," }), text.first!.isNumberQuick else { return nil }
        return Double(String(String.UnicodeScalarView(text.unicodeScalars.map { $0 == "," ? "." : $0 })))
    }
}

/// Units of measure and their canonical names.
enum Units {
    private static let table: [String: String] = {
        let groups: [String: [String]] = [
            "cup": ["cup", "cups", "c"],
            "tbsp": ["tablespoon", "tablespoons", "tbsp", "tbsps", "tbs", "tbl", "tbls", "el"],
            "tsp": ["teaspoon", "teaspoons", "tsp", "tsps", "tl"],
            "g": ["g", "gr", "gram", "grams", "gramme", "grammes"],
            "kg": ["kg", "kilogram", "kilograms", "kilo", "kilos"],
            "mg": ["mg", "milligram", "milligrams"],
            "ml": ["ml", "milliliter", "milliliters", "millilitre", "millilitres"],
            "cl": ["cl", "centiliter", "centilitre", "centiliters", "centilitres"],
            "dl": ["dl", "deciliter", "decilitre", "deciliters", "decilitres"],
            "l": ["l", "liter", "liters", "litre", "litres"],
            "oz": ["oz", "ounce", "ounces"],
            "fl oz": ["fl oz", "fluid ounce", "fluid ounces", "floz"],
            "lb": ["lb", "lbs", "pound", "pounds"],
            "pt": ["pint", "pints", "pt"],
            "qt": ["quart", "quarts", "qt"],
            "gal": ["gallon", "gallons", "gal"],
            "pinch": ["pinch", "pinches"],
            "dash": ["dash", "dashes"],
            "clove": ["clove", "cloves"],
            "can": ["can", "cans", "tin", "tins"],
            "package": ["package", "packages", "pkg", "packet", "packets"],
            "slice": ["slice", "slices"],
            "bunch": ["bunch", "bunches"],
            "handful": ["handful", "handfuls"],
            "sprig": ["sprig", "sprigs"],
            "stick": ["stick", "sticks"],
            "piece": ["piece", "pieces", "pc", "pcs"],
            "head": ["head", "heads"],
            "drop": ["drop", "drops"],
            "jar": ["jar", "jars"],
            "bottle": ["bottle", "bottles"],
            "stalk": ["stalk", "stalks"],
            "fillet": ["fillet", "fillets"],
        ]
        var table: [String: String] = [:]
        for (canonical, names) in groups {
            for name in names { table[name] = canonical }
        }
        return table
    }()

    /// Units that hold a food rather than measure it: a measure beside one is the container's size.
    static let containers: Set<String> = ["can", "package", "jar", "bottle"]
    /// Containers that are not units here, but still make a measure before them a size ("2 14-oz boxes").
    static let containerWords: Set<String> = [
        "box", "boxes", "bag", "bags", "carton", "cartons", "tub", "tubs", "container", "containers",
        "envelope", "envelopes", "pouch", "pouches", "pack", "packs", "block", "blocks", "bar", "bars",
    ]

    /// Units that only count as a unit after a number ("c" alone is not "cup").
    static let ambiguousAlone: Set<String> = ["c", "g", "l", "t", "el", "tl", "can", "head", "stick", "piece", "jar"]

    static func canonical(_ word: String) -> String? {
        let lower = word.lowercased().trimming { $0 == "." }
        return table[lower]
    }
}

/// English words that change with the number before them: units written out, and foods counted one by one. A food
/// not listed here keeps the form it was written in (its plural is not guessed, and the line may be in another language).
enum NumberForms {
    private static let pairs: [(String, String)] = [
        // Units written out (abbreviations stay as written: "2 tbsp", "1 lb").
        ("cup", "cups"), ("tablespoon", "tablespoons"), ("teaspoon", "teaspoons"), ("gram", "grams"), ("gramme", "grammes"),
        ("kilogram", "kilograms"), ("kilo", "kilos"), ("milligram", "milligrams"), ("milliliter", "milliliters"),
        ("millilitre", "millilitres"), ("centiliter", "centiliters"), ("centilitre", "centilitres"), ("deciliter", "deciliters"),
        ("decilitre", "decilitres"), ("liter", "liters"), ("litre", "litres"), ("ounce", "ounces"), ("pound", "pounds"),
        ("pint", "pints"), ("quart", "quarts"), ("gallon", "gallons"), ("pinch", "pinches"), ("dash", "dashes"),
        ("clove", "cloves"), ("can", "cans"), ("tin", "tins"), ("package", "packages"), ("packet", "packets"),
        ("slice", "slices"), ("bunch", "bunches"), ("handful", "handfuls"), ("sprig", "sprigs"), ("stick", "sticks"),
        ("piece", "pieces"), ("head", "heads"), ("drop", "drops"), ("jar", "jars"), ("bottle", "bottles"),
        ("stalk", "stalks"), ("fillet", "fillets"),
        // Foods counted one by one.
        ("egg", "eggs"), ("yolk", "yolks"), ("white", "whites"), ("onion", "onions"), ("shallot", "shallots"),
        ("scallion", "scallions"), ("leek", "leeks"), ("lemon", "lemons"), ("lime", "limes"), ("orange", "oranges"),
        ("apple", "apples"), ("pear", "pears"), ("banana", "bananas"), ("peach", "peaches"), ("plum", "plums"),
        ("apricot", "apricots"), ("avocado", "avocados"), ("mango", "mangoes"), ("tomato", "tomatoes"),
        ("potato", "potatoes"), ("carrot", "carrots"), ("cucumber", "cucumbers"), ("courgette", "courgettes"),
        ("eggplant", "eggplants"), ("aubergine", "aubergines"), ("pepper", "peppers"), ("chili", "chilies"),
        ("chilli", "chillies"), ("chile", "chiles"), ("jalapeño", "jalapeños"), ("jalapeno", "jalapenos"),
        ("leaf", "leaves"), ("rib", "ribs"), ("breast", "breasts"), ("thigh", "thighs"), ("drumstick", "drumsticks"),
        ("wing", "wings"), ("steak", "steaks"), ("chop", "chops"), ("cutlet", "cutlets"), ("sausage", "sausages"),
        ("tortilla", "tortillas"), ("bun", "buns"), ("roll", "rolls"), ("bagel", "bagels"), ("pita", "pitas"),
        ("muffin", "muffins"), ("cookie", "cookies"), ("cracker", "crackers"), ("date", "dates"), ("fig", "figs"),
        ("strawberry", "strawberries"), ("cherry", "cherries"), ("mushroom", "mushrooms"), ("olive", "olives"),
        ("anchovy", "anchovies"), ("radish", "radishes"), ("beet", "beets"), ("turnip", "turnips"),
        ("parsnip", "parsnips"), ("prawn", "prawns"), ("scallop", "scallops"), ("clam", "clams"), ("mussel", "mussels"),
        ("oyster", "oysters"), ("chicken", "chickens"), ("artichoke", "artichokes"), ("zucchini", "zucchinis"),
        ("biscuit", "biscuits"),
    ]
    /// Singular → plural, and either form of a word to the plural (a plural asked for again stays).
    static let plural: [String: String] = Dictionary(pairs.flatMap { [($0.0, $0.1), ($0.1, $0.1)] }, uniquingKeysWith: { first, _ in first })
    static let singular: [String: String] = Dictionary(pairs.flatMap { [($0.1, $0.0), ($0.0, $0.0)] }, uniquingKeysWith: { first, _ in first })
}
