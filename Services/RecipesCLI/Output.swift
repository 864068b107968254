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

    /// 75 → "1 h 15 min", 45 → "45 min", 120 → "2 h".
    static func minutes(_ minutes: Int?) -> String {
        guard let minutes else { return "" }
        switch (minutes / 60, minutes % 60) {
        case (0, let rest): return "\(rest) min"
        case (let hours, 0): return "\(hours) h"
        case (let hours, let rest): return "\(hours) h \(rest) min"
        }
    }

    /// The id a table shows (see `UUID.shortText`).
    static func shortID(_ id: UUID) -> String { id.shortText }

    /// Whether `reference` (4 or more hex digits, any case) is the short id of `id`, or the start or the end of it:
    /// a title such as "Cafe" or "A" is not taken for a piece of an id.
    static func isShortID(_ reference: String, of id: UUID) -> Bool {
        let text = id.uuidString.lowercased(), reference = reference.lowercased()
        guard reference.count >= 4, reference.allSatisfy({ $0.isHexDigit || $0 == "-" }) else { return false }
        return text.hasPrefix(reference) || text.hasSuffix(reference)
    }

    static func stars(_ rating: Int) -> String { rating == 0 ? "" : String(repeating: "★", count: rating) }

    static func date(_ date: Date) -> String { date.formatted(.iso8601.year().month().day()) }

    /// An ingredient line at another serving count: the line as written with its
    /// leading amount replaced ("3 eggs, beaten" at double → "6 eggs, beaten").
    static func scaled(_ line: IngredientLine) -> String {
        guard let quantity = line.quantity else { return line.text }
        var amount = Scaling.format(quantity)
        if let high = line.quantityMax { amount += "-" + Scaling.format(high) }
        let leading = line.text.prefix { $0.isNumber || " ./-–,½⅓⅔¼¾⅕⅛⅜⅝⅞".contains($0) }
        let rest = line.text.dropFirst(leading.count)
        guard !leading.trimmingCharacters(in: .whitespaces).isEmpty else { return "\(amount) × \(line.text)" }
        // "400g" has no space between the amount and the unit; keep it that way.
        return amount + (leading.last == " " ? " " : "") + rest
    }
}
