/// Quantities for another number of servings: computed on request, never stored.
public enum Scaling {
    /// `line` scaled by `factor` (quantity and range end; unit, food and note unchanged).
    public static func scaled(_ line: IngredientLine, by factor: Double) -> IngredientLine {
        var line = line
        line.quantity = line.quantity.map { round($0 * factor) }
        line.quantityMax = line.quantityMax.map { round($0 * factor) }
        return line
    }

    /// The line as written, with every word that says how much replaced for the line's (scaled) quantity; the rest
    /// stays as written. What changes:
    /// - exactly the words the parse read as the amount: "1 to 2 tsp salt" at double → "2-4 tsp salt", "400g butter"
    ///   → "800g butter", "about 2 cups" → "about 4 cups";
    /// - the word after it, where it agrees with the number and is English written out: "1 cup" → "2 cups",
    ///   "1 egg" → "2 eggs", "2 bay leaves" halved → "1 bay leaf" (abbreviations and other words stay);
    /// - the other amounts of the same food, by the same factor: "1 cup (240 ml) milk" → "2 cups (480 ml) milk",
    ///   "12 oz / 340 g pasta", "2 tbsp butter, plus 1 tbsp for the pan"; but not the size of one item or
    ///   container: "1 (14 oz) can beans" → "2 (14 oz) cans beans", "4 fillets (6 oz each)".
    /// A line whose quantity stands in no number ("a pinch of salt") is shown after its amount: "2 × a pinch of salt".
    public static func text(of line: IngredientLine) -> String {
        guard let quantity = line.quantity else { return line.text }
        let amount = range(quantity, line.quantityMax)
        guard let places = IngredientParser.amountPlaces(in: line.text) else { return "\(amount) × \(line.text)" }
        let scalars = Array(line.text.unicodeScalars)
        func written(_ range: Range<Int>) -> String { String(String.UnicodeScalarView(scalars[range])) }
        var edits: [(place: Range<Int>, text: String)] = [(places.scalars, amount)]
        func agree(_ word: Range<Int>?, was: Bool, now: Bool) {
            guard was != now, let word, let form = IngredientParser.numberForm(of: written(word), plural: now) else { return }
            edits.append((word, form))
        }
        agree(places.numberWord, was: IngredientParser.isPlural(places.quantity, places.quantityMax),
              now: IngredientParser.isPlural(quantity, line.quantityMax))
        // The factor the line was scaled by, from what it said before: the same for its other amounts.
        if places.quantity > 0, places.quantity.isFinite {
            let factor = quantity / places.quantity
            for measure in places.measures where !measure.isSize && factor != 1 {
                let low = round(measure.quantity * factor), high = measure.quantityMax.map { round($0 * factor) }
                edits.append((measure.scalars, range(low, high)))
                agree(measure.unitWord, was: IngredientParser.isPlural(measure.quantity, measure.quantityMax),
                      now: IngredientParser.isPlural(low, high))
            }
        }
        var result = String.UnicodeScalarView()
        var at = 0
        for edit in edits.sorted(by: { $0.place.lowerBound < $1.place.lowerBound }) where edit.place.lowerBound >= at {
            result.append(contentsOf: scalars[at..<edit.place.lowerBound])
            result.append(contentsOf: edit.text.unicodeScalars)
            at = edit.place.upperBound
        }
        result.append(contentsOf: scalars[at...])
        return String(result)
    }

    /// An amount or a range as a cook writes it: "2", "1 1/2-3".
    private static func range(_ low: Double, _ high: Double?) -> String {
        format(low) + (high.map { "-" + format($0) } ?? "")
    }

    /// A quantity as a cook would write it: 1.5 → "1 1/2", 0.333 → "1/3", 2 → "2".
    public static func format(_ value: Double) -> String {
        // Stored quantities and servings are bounded, but a number shown must never trap.
        guard value.isFinite, abs(value) < 1e15 else { return String(value) }
        let whole = value.rounded(.down)
        let fraction = value - whole
        let fractions: [(Double, String)] = [(0, ""), (0.125, "1/8"), (0.25, "1/4"), (1.0 / 3, "1/3"), (0.375, "3/8"),
                                             (0.5, "1/2"), (0.625, "5/8"), (2.0 / 3, "2/3"), (0.75, "3/4"), (0.875, "7/8"), (1, "")]
        let nearest = fractions.min { abs($0.0 - fraction) < abs($1.0 - fraction) }!
        if abs(nearest.0 - fraction) > 0.02 || whole >= 10 {
            // Past ten a cook weighs or measures to the unit, or to a tenth below a hundred: "267 g", "12.5 ml".
            let step = value >= 100 ? 1.0 : value >= 10 ? 10 : 100
            let rounded = (value * step).rounded() / step
            return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
        }
        let wholePart = nearest.0 == 1 ? whole + 1 : whole
        switch (wholePart, nearest.1) {
        case (0, ""): return "0"
        case (_, ""): return String(Int(wholePart))
        case (0, let text): return text
        default: return "\(Int(wholePart)) \(nearest.1)"
        }
    }

    private static func round(_ value: Double) -> Double { (value * 1_000).rounded() / 1_000 }
}
