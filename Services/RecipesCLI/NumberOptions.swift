import ArgumentParser
import RecipeModel

/// The checks of the numbers the command line takes, made when the arguments are read (exit 64, with the usage):
/// each says what was given and what is allowed. `nan`, `inf` and values past any range (`1e300`) are numbers to
/// Swift's parser, so every number option comes through one of these before it is used.
enum NumberOptions {
    /// A wait in seconds: more than 0, at most `most`.
    static func seconds(_ value: Double, option: String, most: Double) throws {
        guard value > 0 && value <= most else {
            throw ValidationError("\(option) must be more than 0 and at most \(ValueRanges.format(most)) seconds; got \(ValueRanges.format(value))")
        }
    }

    /// Servings, as a recipe or a cook-log entry holds them (`ValueRanges.servings`).
    static func servings(_ value: Double?, option: String = "--servings") throws {
        if let value, let problem = ValueRanges.servingsProblem(value, field: option) { throw ValidationError(problem) }
    }
}
