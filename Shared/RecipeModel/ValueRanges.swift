/// The documented ranges of the numbers a recipe holds (docs/PROTOCOL.md, "Ranges").
/// Every number that arrives from a person, a page or a replica is checked against
/// these before it is stored or computed with, so no arithmetic on it can overflow.
public enum ValueRanges {
    /// Servings a recipe makes or a cook-log entry records: 0.01 to 10,000.
    public static let servings: ClosedRange<Double> = 0.01...10_000
    /// A cookbook page number: 1 to 100,000.
    public static let pageNumber: ClosedRange<Int> = 1...100_000
    /// A recipe's rating: 0 (unrated) to 5.
    public static let recipeRating: ClosedRange<Int> = 0...5
    /// A cook-log entry's rating: 1 to 5.
    public static let cookRating: ClosedRange<Int> = 1...5

    /// Why `value` is not an acceptable servings count for `field`, or `nil` when it is.
    public static func servingsProblem(_ value: Double, field: String = "servings") -> String? {
        guard !servings.contains(value) else { return nil }
        return "\(field) is \(format(value)); it must be from \(format(servings.lowerBound)) to \(format(servings.upperBound))"
    }

    /// 6 rather than 6.0; nan, inf and numbers past `Int` as Swift writes them.
    public static func format(_ value: Double) -> String {
        value.isFinite && value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
