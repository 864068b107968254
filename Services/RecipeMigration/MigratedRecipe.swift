import Crypto
import Foundation
import RecipeImport
import RecipeModel
import RecipeProtocol

/// A recipe read from another app's export, ready to store.
public struct MigratedRecipe: Sendable {
    /// A photo by its file name in the export.
    public typealias Photo = MigrationEntry.File

    /// The app's own id for the recipe ("paprika:5D3E…"), or one made from the entry's bytes when it has none.
    public var sourceID: String
    /// The recipe's id in RecipeVault: made from `sourceID`, so migrating the same export twice finds the same recipes.
    public var id: UUID
    public var draft: RecipeDraft
    /// When the recipe was first written in the other app.
    public var createdAt: Date?
    public var photos: [Photo]
    /// The book a RecipeVault export put the recipe in.
    public var book: BookOps.Fields?

    public init(sourceID: String, id: UUID? = nil, draft: RecipeDraft, createdAt: Date? = nil, photos: [Photo] = [], book: BookOps.Fields? = nil) {
        self.sourceID = sourceID
        self.id = id ?? Self.id(for: sourceID)
        self.draft = draft
        self.createdAt = createdAt
        self.photos = photos
        self.book = book
    }

    /// `createdAt` as it should travel: the wire writes dates with their milliseconds rounded down, and a
    /// date read from "….123Z" may be held as ….12299…; a quarter of a millisecond on, it arrives as the
    /// millisecond the export wrote.
    public var createdAtForWire: Date? {
        createdAt.map { Date(timeIntervalSince1970: (($0.timeIntervalSince1970 * 1_000).rounded() + 0.25) / 1_000) }
    }

    /// A name-based (version 5 layout) id for a source id.
    public static func id(for sourceID: String) -> UUID {
        var bytes = Array(SHA256.hash(data: Data("migration|\(sourceID)".utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// A stable source id for an entry that carries no id of its own: its bytes' hash.
    public static func contentID(_ format: MigrationFormat, _ data: Data) -> String {
        "\(format.rawValue):sha256:" + SHA256.hash(data: data).prefix(12).map { String(format: "%02x", $0) }.joined()
    }
}

/// Why an entry could not be read; `message` says what was wrong, for the report.
public struct MigrationError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
    public var serviceError: ServiceError { ServiceError(.unreadableEntry, message) }
}

/// What every format is turned into first: a schema.org Recipe object (read by the same code as
/// web pages, so text is cleaned, durations are read leniently and limits are kept), plus what
/// schema.org has no place for. Anything of the other app's that RecipeVault has no field for
/// goes into the notes as "Label: value" lines rather than being lost.
struct RecipeSketch {
    var schema: [String: Any] = ["@type": "Recipe"]
    var sourceURL: String?
    var notes: [String] = []
    var extras: [(label: String, value: String)] = []
    var rating: Int?
    var isFavorite = false
    var servings: Double?
    var createdAt: Date?
    var photos: [MigratedRecipe.Photo] = []

    subscript(key: String) -> Any? {
        get { schema[key] }
        set { schema[key] = newValue }
    }

    /// Adds a line to the notes for something with no field of its own.
    mutating func keep(_ label: String, _ value: Any?) {
        guard let text = Self.text(value), !RecipeDraft.isBlank(text) else { return }
        extras.append((label, text))
    }

    /// JSON's true and false (Foundation hands them over as NSNumbers of type "c").
    static func isBoolean(_ number: NSNumber) -> Bool { String(cString: number.objCType) == "c" }

    static func text(_ value: Any?) -> String? {
        switch value {
        case let text as String: return text.trimmingCharacters(in: .whitespacesAndNewlines)
        case let number as NSNumber:
            if isBoolean(number) { return number.boolValue ? "yes" : "no" }
            return number.doubleValue.rounded() == number.doubleValue && abs(number.doubleValue) < 1e15
                ? String(Int64(number.doubleValue)) : "\(number.doubleValue)"
        case let list as [Any]:
            let items = list.compactMap { text($0) }.filter { !$0.isEmpty }
            return items.isEmpty ? nil : items.joined(separator: ", ")
        default: return nil
        }
    }

    /// The recipe, or why there is none.
    func recipe(sourceID: String, label: String) throws(MigrationError) -> MigratedRecipe {
        let url = sourceURL.flatMap { $0.hasPrefix("http://") || $0.hasPrefix("https://") ? $0 : nil }
        guard let name = Self.text(schema["name"]), !RecipeDraft.isBlank(name) else {
            throw MigrationError("\(label) has no recipe name; a recipe needs one")
        }
        guard let imported = RecipeExtractor.extract(json: schema, url: url) else {
            throw MigrationError("\(label) could not be read as a recipe")
        }
        var draft = imported.draft
        draft.origin = .custom
        var lines = notes.filter { !RecipeDraft.isBlank($0) }
        // What was written but not understood keeps its words.
        for (key, label) in [("prepTime", "Prep time"), ("cookTime", "Cook time"), ("totalTime", "Total time")] {
            let written = Self.text(schema[key])
            let read: String? = switch key {
            case "prepTime": draft.prepTime
            case "cookTime": draft.cookTime
            default: draft.totalTime
            }
            if let written, !written.isEmpty, read == nil { lines.append("\(label): \(written)") }
        }
        if let yield = Self.text(schema["recipeYield"]), draft.recipeYield == nil, !yield.isEmpty { lines.append("Yield: \(yield)") }
        if sourceURL != nil, url == nil, let source = sourceURL, !source.isEmpty { lines.append("Source: \(source)") }
        lines += extras.map { "\($0.label): \($0.value)" }
        lines += imported.leftOut.map { "Left out on import: \($0)" }
        if !lines.isEmpty { draft.notes = lines.joined(separator: "\n\n") }
        if let servings, ValueRanges.servings.contains(servings) { draft.servings = servings }
        if let rating { draft.rating = min(max(rating, 0), 5) }
        draft.isFavorite = isFavorite
        // The notes gathered here can pass the limits the importer fitted the rest to.
        draft = draft.fittedToLimits
        do {
            try draft.validate()
        } catch {
            throw MigrationError("\(label): \(error.message)")
        }
        let created = createdAt.flatMap { $0.timeIntervalSince1970 > 0 && $0 <= Date() ? $0 : nil }
        return MigratedRecipe(sourceID: sourceID, draft: draft, createdAt: created, photos: Array(photos.prefix(RecipeVault.maxPhotosPerRecipe)))
    }

    // MARK: Reading the other apps' values

    /// A date as apps write them: ISO 8601 (with or without time or zone), "2021-03-04 12:34:56", or seconds since 1970.
    static func date(_ value: Any?) -> Date? {
        if let number = value as? NSNumber, !isBoolean(number) {
            let seconds = number.doubleValue > 1e11 ? number.doubleValue / 1_000 : number.doubleValue
            return seconds > 0 && seconds < 4e9 ? Date(timeIntervalSince1970: seconds) : nil
        }
        guard let text = (value as? String)?.trimmingCharacters(in: .whitespaces), text.count >= 10, text.count <= 40 else { return nil }
        let normalized = text.replacingOccurrences(of: " ", with: "T")
        var withZone = normalized
        let time = normalized.dropFirst(10)
        if !time.contains("Z") && !time.contains("+") && !time.contains("-") { withZone += time.isEmpty ? "T00:00:00Z" : "Z" }
        for options in [Date.ISO8601FormatStyle(includingFractionalSeconds: false), Date.ISO8601FormatStyle(includingFractionalSeconds: true)] {
            if let date = try? options.parse(withZone) { return date }
        }
        // Fractions with more digits than milliseconds ("2023-01-01T10:00:00.123456"): cut them.
        if let dot = withZone.firstIndex(of: ".") {
            let zone = withZone[dot...].drop { $0 == "." || $0.isNumber }
            if let date = try? Date.ISO8601FormatStyle().parse(String(withZone[..<dot]) + zone) { return date }
        }
        return nil
    }

    /// The size past which a number in an export is no recipe's (a rating, minutes, servings, a quantity, an order):
    /// such a number is read as absent. It also keeps every whole-number conversion after the readers in range.
    static let largestNumber = 1e9

    /// A number written as a number or as text ("4", "4.5"), when a recipe could hold it: finite and of a size
    /// under `largestNumber` ("1e300", "inf" and "nan" are read as no number).
    static func number(_ value: Any?) -> Double? {
        let read: Double? = switch value {
        case let number as NSNumber where !isBoolean(number): number.doubleValue
        case let text as String: Double(text.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: ",", with: "."))
        default: nil
        }
        guard let read, read.isFinite, abs(read) < largestNumber else { return nil }
        return read
    }

    /// True, 1, "1", "yes", "true".
    static func flag(_ value: Any?) -> Bool {
        switch value {
        case let number as NSNumber: number.boolValue
        case let text as String: ["1", "yes", "true", "y"].contains(text.lowercased())
        default: false
        }
    }

    /// Lines of a newline-separated text, trimmed, blank ones dropped.
    static func lines(_ value: Any?) -> [String] {
        switch value {
        case let text as String:
            return text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        case let list as [Any]: return list.flatMap { lines($0) }
        default: return []
        }
    }

    /// An amount as a cook writes it: 2, 0.5 → "1/2", 1.25 → "1 1/4"; other decimals as they are.
    static func amount(_ value: Double) -> String {
        guard value.isFinite, value > 0 else { return "" }
        // Quantities of one ingredient added up (Cooklang) can pass any whole number: written as they are.
        guard value < largestNumber else { return String(value) }
        let whole = value.rounded(.down)
        let fraction = value - whole
        let known: [(Double, String)] = [(0.125, "1/8"), (0.25, "1/4"), (1.0 / 3, "1/3"), (0.5, "1/2"), (2.0 / 3, "2/3"), (0.75, "3/4")]
        if fraction < 0.001 { return String(Int64(whole)) }
        if let match = known.first(where: { abs($0.0 - fraction) < 0.01 }) {
            return whole == 0 ? match.1 : "\(Int64(whole)) \(match.1)"
        }
        var text = String(format: "%.3f", value)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }

    /// Decodes base64 as apps write it (line breaks, missing padding, a `data:` URL), byte by byte:
    /// a photo's base64 is hundreds of kilobytes, too long to walk as characters.
    static func base64(_ value: Any?) -> Data? {
        guard let text = value as? String, !text.isEmpty else { return nil }
        // Most exports: plain base64, maybe with line breaks, which Foundation skips on its own.
        if !text.hasPrefix("data:"), let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters) { return data }
        var utf8 = Substring(text).utf8[...]
        if utf8.starts(with: "data:".utf8), let comma = utf8.firstIndex(of: UInt8(ascii: ",")) { utf8 = utf8[utf8.index(after: comma)...] }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count + 3)
        for byte in utf8 where byte > 0x20 { bytes.append(byte) }
        while bytes.count % 4 != 0 { bytes.append(UInt8(ascii: "=")) }
        return Data(base64Encoded: Data(bytes))
    }

    /// Text as files are written: UTF-8 (its byte-order mark dropped), else Windows-1252, as older
    /// editors saved it, rather than refused.
    static func decodeText(_ data: Data) -> String {
        if var text = String(data: data, encoding: .utf8) {
            if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
            return text
        }
        return String(data: data, encoding: .windowsCP1252) ?? String(decoding: data, as: UTF8.self)
    }

    /// The JSON object in `data`, or why not.
    static func object(_ data: Data, _ what: String) throws(MigrationError) -> [String: Any] {
        let value: Any
        do {
            value = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw MigrationError("\(what) is not valid JSON")
        }
        guard let object = value as? [String: Any] else { throw MigrationError("\(what) is JSON but not an object") }
        return object
    }
}

extension Data {
    /// Whether the bytes start like an image RecipeVault or its photo intake reads.
    var looksLikeImage: Bool {
        ImageKind.detect(self) != nil || (count >= 12 && self[startIndex + 4..<startIndex + 8].elementsEqual(Array("ftyp".utf8)))
    }
}
