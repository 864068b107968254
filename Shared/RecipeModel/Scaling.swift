/// Quantities for another number of servings: computed on request, never stored.
public enum Scaling {
    /// `line` scaled by `factor` (quantity and range end; unit, food and note unchanged).
    public static func scaled(_ line: IngredientLine, by factor: Double) -> IngredientLine {
        var line = line
        line.quantity = line.quantity.map { round($0 * factor) }
        line.quantityMax = line.quantityMax.map { round($0 * factor) }
        return line
    }

    /// The line as written with its amount replaced by the line's (scaled) quantity: exactly the words the parse read
    /// as the amount ("1 to 2 tsp salt" at double → "2-4 tsp salt", "400g butter" → "800g butter", "3 eggs, beaten" →
    /// "6 eggs, beaten"); the rest stays as written. A line whose quantity stands in no number ("a pinch of salt")
    /// is shown after its amount: "2 × a pinch of salt".
    public static func text(of line: IngredientLine) -> String {
        guard let quantity = line.quantity else { return line.text }
        var amount = format(quantity)
        if let high = line.quantityMax { amount += "-" + format(high) }
        guard let place = IngredientParser.amount(in: line.text)?.scalars else { return "\(amount) × \(line.text)" }
        let scalars = Array(line.text.unicodeScalars)
        var result = String.UnicodeScalarView()
        result.append(contentsOf: scalars[..<place.lowerBound])
        result.append(contentsOf: amount.unicodeScalars)
        result.append(contentsOf: scalars[place.upperBound...])
        return String(result)
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
            let rounded = (value * 100).rounded() / 100
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
