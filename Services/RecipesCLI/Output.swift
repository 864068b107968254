import Foundation
import RecipeModel
import RecipeProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Printing for people (tables, colour on a terminal) and for scripts (`--json`).
enum Output {
    /// Colour only on a terminal, and never with NO_COLOR set.
    static let colour = isatty(STDOUT_FILENO) == 1 && environment("NO_COLOR") == nil

    static func bold(_ text: String) -> String { colour ? "\u{1B}[1m\(text)\u{1B}[0m" : text }
    static func dim(_ text: String) -> String { colour ? "\u{1B}[2m\(text)\u{1B}[0m" : text }

    /// The value as stable JSON (sorted keys, ISO 8601 dates) on standard output.
    static func json<T: Encodable>(_ value: T) throws {
        let encoder = WireCodec.makeEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        FileHandle.standardOutput.write(try encoder.encode(value) + Data("\n".utf8))
    }

    /// Columns padded to their widest cell; the header in bold.
    static func table(_ header: [String], _ rows: [[String]]) {
        var widths = header.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        print(bold(line(header)))
        for row in rows { print(line(row)) }
    }

    /// 75 → "1 h 15 min", 45 → "45 min", 120 → "2 h"; a day or more counts its days: 2,880 → "2 days", 1,530 →
    /// "1 day 1 h 30 min" (a ham cured for a week reads as 7 days, not 168 h).
    static func minutes(_ minutes: Int?) -> String {
        guard let minutes else { return "" }
        let (days, hours, rest) = (minutes / 1_440, minutes % 1_440 / 60, minutes % 60)
        var parts: [String] = []
        if days > 0 { parts.append(count(days, "day")) }
        if hours > 0 { parts.append("\(hours) h") }
        if rest > 0 || parts.isEmpty { parts.append("\(rest) min") }
        return parts.joined(separator: " ")
    }

    /// "1 photo", "3 photos", "0 photos": a count with its noun, in the singular only for one. `plural` for a noun
    /// that does not take an "s".
    static func count(_ number: Int, _ noun: String, plural: String? = nil) -> String {
        "\(number) \(number == 1 ? noun : plural ?? noun + "s")"
    }

    /// A number of servings as a cook reads it: "1 serving", "2 1/2 servings".
    static func servings(_ number: Double) -> String {
        "\(Scaling.format(number)) \(number == 1 ? "serving" : "servings")"
    }

    /// What a recipe makes, as its facts line shows it: the yield as written ("8 slices"), but a bare number, which a
    /// page or another app may give, as servings ("4" → "4 servings"); the servings when no yield is written.
    static func yield(_ recipe: Recipe) -> String? {
        guard let written = recipe.recipeYield?.trimmingWhitespace(), !written.isEmpty else { return recipe.servings.map(servings) }
        if let number = Double(written), number.isFinite, number > 0 { return servings(number) }
        return written
    }

    /// A book as a message names it among others: "5a3b0002 The Wok, J. Kenji López-Alt".
    static func bookLabel(_ book: Book) -> String {
        "\(shortID(book.id)) \(book.title)" + (book.author.map { ", \($0)" } ?? "")
    }

    /// The id a table shows (see `UUID.shortText`).
    static func shortID(_ id: UUID) -> String { id.shortText }

    /// Whether `reference` (4 or more hex digits, any case) is the short id of `id`, or the start or the end of it:
    /// a title such as "Cafe" or "A" is not taken for a piece of an id.
    static func isShortID(_ reference: String, of id: UUID) -> Bool {
        let text = id.uuidString.lowercased(), reference = reference.lowercased()
        guard looksLikeShortID(reference) else { return false }
        return text.hasPrefix(reference) || text.hasSuffix(reference)
    }

    /// The one of `matches` a reference names; none is "not found" (`none` says so and where to look), several is
    /// refused (`many` gets how many and says what to give instead).
    static func onlyMatch<T>(_ matches: [T], none: @autoclosure () -> String, many: (Int) -> String) throws -> T {
        guard matches.count == 1 else {
            if matches.isEmpty { throw CLIError(none(), status: ExitStatus.notFound) }
            throw CLIError(many(matches.count), status: ExitStatus.refused)
        }
        return matches[0]
    }

    /// Whether `text` could be a piece of an id: 4 or more hex digits (and dashes).
    static func looksLikeShortID(_ text: String) -> Bool {
        text.count >= 4 && text.allSatisfy { $0.isHexDigit || $0 == "-" }
    }

    /// A rating's stars: at most five, none below one (a rating comes in a reply; a count out of range is no reason to stop).
    static func stars(_ rating: Int) -> String { String(repeating: "★", count: min(max(rating, 0), 5)) }

    static func date(_ date: Date) -> String { date.formatted(.iso8601.year().month().day()) }

    /// An ingredient line at another serving count (`Scaling.text(of:)`): "3 eggs, beaten" at double → "6 eggs, beaten".
    static func scaled(_ line: IngredientLine) -> String { Scaling.text(of: line) }
}
