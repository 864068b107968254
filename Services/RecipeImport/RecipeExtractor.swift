import Foundation
import RecipeModel
import RecipeProtocol

/// A recipe read off a web page, ready to store.
public struct ImportedRecipe: Sendable, Equatable {
    /// The recipe as a draft (`website` is the page, `sourceType` url, `origin` imported).
    public var draft: RecipeDraft
    /// Image addresses, best first.
    public var images: [String]
    /// schema.org NutritionInformation fields as text ("calories": "580 kcal").
    public var nutrition: [String: String]
    /// The yield as the page wrote it (each value when it gave several).
    public var yields: [String] = []
    /// What the page said that was out of range and left out, for a person ("prepTime P99999Y is longer than…").
    public var leftOut: [String] = []
    /// True when the page had no schema.org recipe and the recipe was read from its headings and lists.
    public var readWithoutStructuredData = false
    /// The sizes the page declares for its images (ImageObject.width and height), by address.
    var imageSizes: [String: ImageChoice.Size] = [:]

    /// The note a recipe read without structured data carries, so its reader checks it.
    public static let unstructuredNote = "Read from the page's headings and lists (it has no schema.org recipe): check the ingredients and steps against the page."
}

/// Reads schema.org/Recipe from a page's HTML (JSON-LD; microdata when there is no JSON-LD recipe).
public enum RecipeExtractor {
    /// The sizes in bytes of the page's JSON-LD blocks that were not read for their size (at most 2 MB each are):
    /// for the message of a page that gave no recipe.
    public static func unreadJSONLDSizes(in html: String) -> [Int] {
        JSONLD.oversizedBlocks(in: html)
    }

    /// The largest JSON-LD block read, in bytes.
    public static var maxJSONLDBytes: Int { JSONLD.maxBlockBytes }

    /// The recipe on the page at `url`, or `nil` when the page has none.
    public static func extract(html: String, url: String) -> ImportedRecipe? {
        let blocks = JSONLD.blocks(in: html)
        let meta = HTMLText.metas(in: html)
        var found = JSONLD.recipe(in: blocks)
        // Microdata: the recipe when JSON-LD has none, else what the JSON-LD recipe leaves out (some pages split them).
        let fillable = ["recipeIngredient", "recipeInstructions", "recipeYield", "nutrition", "prepTime", "cookTime", "totalTime",
                        "recipeCategory", "recipeCuisine", "image", "description", "author"]
        if found == nil || fillable.contains(where: { isEmptyValue(found?[$0]) }), let micro = Microdata.recipe(in: html, orphans: found == nil) {
            if found == nil {
                found = micro
            } else {
                for key in fillable where isEmptyValue(found?[key]) && !isEmptyValue(micro[key]) { found?[key] = micro[key] }
            }
        }
        // The page as text blocks, read at most once, and only when something below needs it.
        var readBlocks: [HeadingReader.Block]?
        func textBlocks() -> [HeadingReader.Block] {
            if let readBlocks { return readBlocks }
            let read = HeadingReader.blocks(in: html)
            readBlocks = read
            return read
        }
        var structured = found != nil
        if !structured { found = HeadingReader.recipe(in: html, meta: meta, blocks: textBlocks()) }
        // A schema.org recipe without its ingredients or steps: those the page shows under its headings.
        if structured, let recipe = found, list(recipe["recipeIngredient"] ?? recipe["ingredients"]).isEmpty || isEmptyValue(recipe["recipeInstructions"]),
           let read = HeadingReader.recipe(in: html, meta: meta, blocks: textBlocks()) {
            for key in ["recipeIngredient", "recipeInstructions"] where isEmptyValue(recipe[key]) && (key != "recipeIngredient" || recipe["ingredients"] == nil) {
                found?[key] = read[key]
                structured = false
            }
        }
        if let author = found?["author"] { found?["author"] = JSONLD.resolvingReferences(author, in: blocks) }
        // No author on the recipe: the page's author in its head, else its publisher (a brand's site is the recipe's author).
        if found != nil, found?["author"].flatMap(author) == nil {
            let publisher = found?["publisher"].flatMap { JSONLD.resolvingReferences($0, in: blocks) }.flatMap(author)
            if let byline = meta["author"] ?? publisher ?? meta["og:site_name"], byline.count <= 200 {
                found?["author"] = byline
            }
        }
        // No description on the recipe: the page's own summary of itself.
        if found != nil, found.flatMap({ text($0["description"]) }) == nil,
           let summary = meta["description"] ?? meta["og:description"] {
            found?["description"] = summary
        }
        // No yield, or no time at all, on a schema.org recipe: those the page shows as text ("Serves: 4", "Prep Time: 5 minutes").
        // (Read only then: the page's text is read once more for it.)
        let noYield = isEmptyValue(found?["recipeYield"]) && isEmptyValue(found?["yield"])
        let noTimes = ["totalTime", "prepTime", "cookTime"].allSatisfy { isEmptyValue(found?[$0]) }
        if structured, found != nil, noYield || noTimes {
            let page = textBlocks()
            if noYield, let shown = HeadingReader.yieldText(page) { found?["recipeYield"] = shown }
            if noTimes { for (field, text) in HeadingReader.timeTexts(page) { found?[field] = text } }
        }
        guard var recipe = found.flatMap({ normalize($0, url: url) }) else { return nil }
        if !structured {
            recipe.readWithoutStructuredData = true
            recipe.draft.notes = ImportedRecipe.unstructuredNote
        }
        let shared = meta.images.compactMap { image in resolved([image.address], against: url).first.map { ($0, image.size) } }
        recipe.images = ImageChoice.ordered(recipeImages: resolved(recipe.images, against: url),
                                            declared: recipe.imageSizes.reduce(into: [:]) { sizes, entry in
                                                if let address = resolved([entry.key], against: url).first { sizes[address] = entry.value }
                                            },
                                            shared: shared)
        return recipe
    }

    /// The page as the heading reader sees it, a block per line ("heading: Ingredients", "item: 2 eggs"), to see why a page without
    /// structured data gave no recipe.
    public static func outline(html: String) -> [String] {
        HeadingReader.blocks(in: html).map { "\($0.kind): \($0.text.prefix(160))" }
    }

    /// The recipe in an already-parsed JSON-LD value (a file's contents). `url` is
    /// where it came from when known; otherwise the recipe's own `url`, if it has one.
    public static func extract(json: Any, url: String?) -> ImportedRecipe? {
        JSONLD.recipe(in: [json]).flatMap { normalize($0, url: url) }
    }

    /// Image addresses made absolute against the page, without fragments, each once.
    static let maxImageAddressBytes = 4_096
    static let maxImages = 64

    static func resolved(_ images: [String], against page: String) -> [String] {
        let base = URL(string: page)
        var seen = Set<String>()
        let scheme = base?.scheme ?? "https"
        // No real image address is longer than a few hundred characters: a longer one (a hostile page's) is not read at all.
        return images.prefix(maxImages).compactMap { image -> String? in
            guard image.utf8.count <= maxImageAddressBytes else { return nil }
            // Absolute (or scheme-relative) addresses are kept as the page wrote them, not re-encoded.
            let trimmed = image.trimmingCharacters(in: .whitespaces)
            let lowered = trimmed.lowercased()
            if lowered.hasPrefix("https://") || lowered.hasPrefix("http://") || trimmed.hasPrefix("//"),
               !trimmed.contains(where: { $0 == " " || $0 == "\"" || $0 == "<" || $0 == ">" }) {
                let bare = String(trimmed.prefix { $0 != "#" })
                let absolute = bare.hasPrefix("//") ? scheme + ":" + bare : bare
                return seen.insert(absolute).inserted ? absolute : nil
            }
            guard var components = URLComponents(string: image.trimmingCharacters(in: .whitespaces)) else { return nil }
            components.fragment = nil
            guard let absolute = components.url(relativeTo: base)?.absoluteString, seen.insert(absolute).inserted else { return nil }
            return absolute
        }
    }

    static func normalize(_ r: [String: Any], url pageURL: String?) -> ImportedRecipe? {
        let url = pageURL ?? text(r["url"]).flatMap { $0.hasPrefix("http://") || $0.hasPrefix("https://") ? $0 : nil }
        guard let name = text(r["name"]) ?? text(r["headline"]), !RecipeDraft.isBlank(name) else { return nil }
        var leftOut: [String] = []
        // A line whose quantity is absurd ("999…9 cups") is dropped; the rest of the recipe is imported.
        let ingredients = rejoinedAtCommas(list(r["recipeIngredient"] ?? r["ingredients"])).map { tidyIngredient(HTMLText.clean($0)) }.filter { line in
            guard !RecipeDraft.isBlank(line) else { return false }
            guard let number = IngredientParser.outOfRangeQuantity(line) else { return true }
            leftOut.append("the ingredient line \"\(line.prefix(60))\" (its quantity \(number.prefix(20)) is out of range)")
            return false
        }
        var steps: [RecipeDraft.Step] = []
        collectSteps(r["recipeInstructions"], section: nil, into: &steps)
        let yields = yieldCandidates(r["recipeYield"] ?? r["yield"])
        let prep = duration(r["prepTime"], "prepTime", &leftOut), cook = duration(r["cookTime"], "cookTime", &leftOut)
        var total = duration(r["totalTime"], "totalTime", &leftOut)
        // No total given: the parts the page does give, added up (prep alone is the total of a no-cook recipe).
        let parts = [prep, cook].compactMap { $0.flatMap(ISODuration.minutes) }
        if total == nil, !parts.isEmpty, parts.reduce(0, +) <= ISODuration.maxMinutes {
            total = ISODuration.text(minutes: parts.reduce(0, +))
        }
        let nutrition = nutritionFields(r["nutrition"])
        // Cut to what storage keeps in one place (`fittedToLimits`), for every text and list alike.
        var draft = RecipeDraft(
            name: name, description: text(r["description"]), ingredients: ingredients.map { .init(text: $0) }, instructions: steps,
            recipeYield: yields.first, servings: yields.lazy.compactMap { YieldText.read($0)?.count }.first,
            prepTime: prep, cookTime: cook, totalTime: total,
            recipeCategory: joined(r["recipeCategory"]), recipeCuisine: joined(r["recipeCuisine"]),
            keywords: keywords(r["keywords"]), author: author(r["author"]), datePublished: text(r["datePublished"]),
            nutrition: nutritionText(nutrition), website: url, sourceType: url == nil ? .manual : .url, origin: .imported
        ).fittedToLimits
        guard !RecipeDraft.isBlank(draft.name) else { return nil }
        if let servings = draft.servings, !ValueRanges.servings.contains(servings) {
            leftOut.append("servings \(servings) (out of range)")
            draft.servings = nil
        }
        var imported = ImportedRecipe(draft: draft, images: images(r["image"]), nutrition: nutrition, yields: yields, leftOut: leftOut)
        imported.imageSizes = declaredSizes(r["image"])
        return imported
    }

    // MARK: Fields

    /// An ingredient line as the page meant it, undoing what recipe plugins and encodings get wrong:
    /// - "1 chilli ((optional))" → "1 chilli (optional)" (a note that already had its parentheses, wrapped again);
    /// - "bok choy (, chopped)" → "bok choy , chopped" (an empty unit note before the note);
    /// - "- 300 g flour" → "300 g flour" (a bullet typed into the text);
    /// - "2/3 cupÂ orange juice" → "2/3 cup orange juice" (a no-break space read in the wrong encoding);
    /// - "2.0 Zehen" → "2 Zehen" (a whole number written as a decimal), "1Zwiebel" → "1 Zwiebel".
    static func tidyIngredient(_ line: String) -> String {
        var line = line
        if line.firstRange(of: "Â") != nil { line = HTMLText.collapse(line.replacingOccurrences(of: "Â\u{A0}", with: " ").replacingOccurrences(of: "Â ", with: " ")) }
        if line.firstRange(of: "((") != nil { line.replace(Patterns.doubled) { "(\($0.output.1))" } }
        if line.firstRange(of: "(,") != nil { line.replace(Patterns.emptyNote) { ", \($0.output.1)" } }
        if let first = line.first, "-•*·–▪".contains(first), line.dropFirst().first == " " { line = String(line.dropFirst(2)) }
        if line.firstRange(of: ".0") != nil { line.replace(Patterns.wholeDecimal) { "\($0.output.1)\($0.output.2)" } }
        if hasDigitBeforeCapital(line) { line.replace(Patterns.numberRunIn) { "\($0.output.1)\($0.output.2) \($0.output.3)" } }
        return line
    }

    static func isEmptyValue(_ value: Any?) -> Bool {
        switch value {
        case nil: return true
        case let string as String: return RecipeDraft.isBlank(HTMLText.clean(string))
        case let list as [Any]: return list.isEmpty
        default: return false
        }
    }

    /// A digit right before a capital letter ("1Zwiebel"), found without a regular expression.
    static func hasDigitBeforeCapital(_ line: String) -> Bool {
        var previousIsDigit = false
        for character in line {
            if previousIsDigit && character.isUppercase { return true }
            previousIsDigit = character.isNumber
        }
        return false
    }

    /// The patterns, compiled once (a regex literal is parsed each time it is made).
    private enum Patterns {
        nonisolated(unsafe) static let doubled = #/\(\(([^()]*)\)\s*\)/#
        nonisolated(unsafe) static let emptyNote = #/\(,\s*((?:[^()]|\([^()]*\))*)\)/#
        nonisolated(unsafe) static let wholeDecimal = #/(^|\s)(\d+)\.0(?=\s|$)/#
        nonisolated(unsafe) static let numberRunIn = #/(^|\s)(\d+)(\p{Lu}\p{Ll})/#
        nonisolated(unsafe) static let hourWords = #/(\d+(?:[.,]\d+)?)\s*(?:h|hr|hrs|hour|hours|std|stunde|stunden|uur|heure|heures|hora|horas|ora|ore|timme|timmar|time|timer|godz|óra)(?![a-z])/#
        nonisolated(unsafe) static let minuteWords = #/(\d+)\s*(?:m|min|mins|minute|minutes|minuten|minuut|minuti|minutos|minuter|minutter|perc|minut|minuty)\b/#
        nonisolated(unsafe) static let hoursThenMinutes = #/\d\s*h\s*(\d{1,2})\b/#
    }

    static func text(_ value: Any?) -> String? {
        switch value {
        case let string as String: let cleaned = HTMLText.clean(string); return RecipeDraft.isBlank(cleaned) ? nil : cleaned
        case let number as NSNumber: return number.stringValue
        case let list as [Any]: return list.lazy.compactMap { text($0) }.first
        case let object as [String: Any]: return text(object["name"] ?? object["text"] ?? object["@value"])
        default: return nil
        }
    }

    static func list(_ value: Any?) -> [String] {
        switch value {
        case let string as String: return string.split(whereSeparator: \.isNewline).map(String.init)
        case let list as [Any]: return list.compactMap { item in (item as? String) ?? text(item) }
        default: return []
        }
    }

    private static func collectSteps(_ value: Any?, section: String?, into steps: inout [RecipeDraft.Step]) {
        switch value {
        case let string as String:
            // One string: its paragraphs are the steps (HTML paragraphs, or blank-line separated text whose single line
            // breaks only wrap), else its lines; numbered steps run together in one text are parted.
            var separated = string
            let hasTags = string.utf8.contains(UInt8(ascii: "<"))
            if hasTags { separated = separated.replacingOccurrences(of: "</p>", with: "\n\n").replacingOccurrences(of: "<br", with: "\n<br") }
            if string.utf8.contains(0x0D) { separated = separated.replacingOccurrences(of: "\r\n", with: "\n") }
            // (Blank lines as written: "\n\n", not the "\r\n" line ends of page source, which are not paragraphs.)
            let blankLines = !hasTags && ByteScan.find("\n\n", in: string, from: string.startIndex) != nil
            let lines = blankLines
                ? separated.components(separatedBy: "\n\n").map { $0.replacingOccurrences(of: "\n", with: " ") }
                : separated.split(whereSeparator: \.isNewline).map(String.init)
            for line in lines {
                let cleaned = HTMLText.clean(line)
                guard !RecipeDraft.isBlank(cleaned) else { continue }
                for part in numberedParts(cleaned) ?? [cleaned] {
                    steps.append(.init(text: part, section: section))
                }
            }
        case let list as [Any]:
            for item in list { collectSteps(item, section: section, into: &steps) }
        case let object as [String: Any]:
            let type = (object["@type"] as? String) ?? ((object["@type"] as? [Any])?.first as? String) ?? ""
            if type.hasSuffix("HowToSection") || (object["itemListElement"] != nil && object["text"] == nil) {
                collectSteps(object["itemListElement"], section: text(object["name"]) ?? section, into: &steps)
            } else if let stepText = text(object["text"]) ?? text(object["name"]) ?? text(object["description"]) {
                let title = text(object["name"]).flatMap { stepTitle($0, text: stepText) }
                let parts = numberedParts(stepText) ?? [stepText]
                for (index, part) in parts.enumerated() {
                    steps.append(.init(text: part, section: section, title: index == 0 ? title : nil))
                }
            }
        default:
            break
        }
    }

    /// A step's `name` when it is a title of its own ("Make the caramel"), not the text again or its opening words
    /// (many sites repeat the text, or its first sentence, as the name).
    /// (A name that opens the text is read as the text again, as schema.org readers do; RecipeVault's own export is read
    /// back exactly by `recipes import-dir`.)
    static func stepTitle(_ name: String, text: String) -> String? {
        let bare = name.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: ".…")))
        guard !bare.isEmpty, bare.count <= RecipeDraft.Limits.nameLength, !isNumbering(bare),
              !text.prefix(bare.count + 8).lowercased().hasPrefix(bare.lowercased()) else { return nil }
        return name
    }

    /// "Step 1", "Schritt 2", "stap 3", "step4", "5.", "gazpacho_r step 1": a step's number in any language, not a title.
    static func isNumbering(_ label: String) -> Bool {
        guard label.contains(where: \.isNumber) else { return false }
        let words = label.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber })
        let letters = label.filter(\.isLetter)
        if words.count <= 2 && letters.count <= 8 { return true }
        // "… step 3": a step word, then the number, at the end.
        guard words.count >= 2, words.last!.allSatisfy(\.isNumber) else { return false }
        return stepWords.contains(String(words[words.count - 2]))
    }

    static let stepWords: Set<String> = ["step", "stap", "schritt", "passo", "paso", "étape", "etape", "etapa", "krok", "steg", "trin",
                                         "vaihe", "lépés", "adım", "stage", "fase"]

    /// An ingredient list a site made by splitting its text at every comma (most items after the first start with the
    /// space that followed a comma): the pieces that continue a line are joined back to it — one starting in lower case
    /// after a line with an amount ("250 g Schweinefleisch" + "in Stücken", but not "Salz" + "frisch gemahlener Pfeffer"),
    /// one after an open parenthesis ("(Thymian" + "Oregano)"), or digits after a bare number
    /// ("1" + "5 TL" → "1,5 TL"). Other lists are returned as they are.
    static func rejoinedAtCommas(_ items: [String]) -> [String] {
        guard items.count >= 4, items.dropFirst().filter({ $0.first == " " }).count * 2 >= items.count else { return items }
        var joined: [String] = []
        for item in items {
            let piece = item.drop { $0 == " " }
            guard let previous = joined.last, let first = piece.first else {
                joined.append(String(piece))
                continue
            }
            let openParenthesis = previous.filter { $0 == "(" }.count > previous.filter { $0 == ")" }.count
            if previous.allSatisfy(\.isNumber) && first.isNumber {
                joined[joined.count - 1] += "," + piece
            } else if (first.isLowercase && previous.first?.isNumber == true) || openParenthesis {
                joined[joined.count - 1] += ", " + piece
            } else {
                joined.append(String(piece))
            }
        }
        return joined
    }

    /// "1. Preheat the oven.2. Whisk the eggs." → its numbered steps, when one text holds several numbered 1, 2, 3….
    static func numberedParts(_ text: String) -> [String]? {
        guard text.hasPrefix("1.") || text.hasPrefix("1)") else { return nil }
        var parts: [String] = []
        var rest = Substring(text)
        var number = 1
        while true {
            let marker = "\(number)", next = "\(number + 1)"
            guard rest.hasPrefix(marker + ".") || rest.hasPrefix(marker + ")") else { return nil }
            rest = rest.dropFirst(marker.count + 1)
            // The next number starts a part only right after the end of a sentence.
            var end = rest.endIndex
            var search = rest.startIndex
            while let found = rest[search...].range(of: next) {
                let after = rest[found.upperBound...]
                let before = rest[..<found.lowerBound].last { !$0.isWhitespace }
                if (after.hasPrefix(".") || after.hasPrefix(")")), let before, ".!?)".contains(before) {
                    end = found.lowerBound
                    break
                }
                search = found.upperBound
            }
            let part = rest[..<end].trimmingCharacters(in: .whitespaces)
            if !part.isEmpty { parts.append(part) }
            guard end < rest.endIndex else { break }
            rest = rest[end...]
            number += 1
        }
        return parts.count >= 2 ? parts : nil
    }

    private static func yieldCandidates(_ value: Any?) -> [String] {
        switch value {
        case let string as String: return [HTMLText.clean(string)].filter { !$0.isEmpty }
        case let number as NSNumber: return ["\(number)"]
        case let list as [Any]:
            // The one with words ("4 servings") reads better than a bare number.
            let all = list.flatMap { yieldCandidates($0) }
            return all.sorted { ($0.contains { $0.isLetter } ? 0 : 1) < ($1.contains { $0.isLetter } ? 0 : 1) }
        default: return []
        }
    }

    /// The page's duration in a clean form; one that is longer than a recipe may take is left out, and said so.
    /// Read leniently, as sites write durations: ISO 8601 with empty parts ("PTH25MS"), or words ("1 hour 30 mins", "45 Minuten", "90").
    private static func duration(_ value: Any?, _ field: String, _ leftOut: inout [String]) -> String? {
        guard let written = text(value), written.count <= ISODuration.maxTextLength else { return nil }
        let raw = written.replacingOccurrences(of: " ", with: "")
        var reading = ISODuration.read(raw)
        if reading == .notADuration, raw.uppercased().hasPrefix("P") {
            // A designator with no number before it is an empty part: "PTH25MS" → "PT25M".
            var repaired = ""
            for character in raw.uppercased() {
                if "YMWDHS".contains(character), let last = repaired.last, !(last.isNumber || last == "." || last == ",") { continue }
                repaired.append(character)
            }
            reading = ISODuration.read(repaired)
        }
        if reading == .notADuration, let minutes = spokenMinutes(written) { reading = .minutes(minutes) }
        switch reading {
        case .minutes(let minutes) where minutes > 0: return ISODuration.text(minutes: minutes)
        case .outOfRange:
            leftOut.append("\(field) \(raw.prefix(40)) (longer than \(ISODuration.maxMinutes / 1_440) days)")
            return nil
        default: return nil
        }
    }

    /// "1 hour 30 mins", "1h30", "45 Minuten", "2 heures", "90": minutes, when the text is only a duration.
    static func spokenMinutes(_ text: String) -> Int? {
        let lowered = text.lowercased()
        if let whole = Int(lowered.trimmingCharacters(in: .whitespaces)), (1...ISODuration.maxMinutes).contains(whole) { return whole }
        let hours = lowered.firstMatch(of: Patterns.hourWords).flatMap { Double($0.output.1.replacingOccurrences(of: ",", with: ".")) }
        var minutes = lowered.firstMatch(of: Patterns.minuteWords).flatMap { Int($0.output.1) }
        // "1h30": minutes right after the hours mark.
        if minutes == nil, hours != nil, let tail = lowered.firstMatch(of: Patterns.hoursThenMinutes) { minutes = Int(tail.output.1) }
        guard hours != nil || minutes != nil else { return nil }
        // Bounded before any conversion: "99999999999999999999 hours" is out of range, never a trap.
        let hourMinutes = (hours ?? 0) * 60
        guard hourMinutes.isFinite, hourMinutes <= Double(ISODuration.maxMinutes), (minutes ?? 0) <= ISODuration.maxMinutes else { return nil }
        let total = Int(hourMinutes.rounded()) + (minutes ?? 0)
        return (1...ISODuration.maxMinutes).contains(total) ? total : nil
    }

    private static func joined(_ value: Any?) -> String? {
        let items = list(value).flatMap { $0.split(separator: ",").map { HTMLText.clean(String($0)) } }.filter { !$0.isEmpty }
        var seen = Set<String>()
        let unique = items.filter { seen.insert($0.lowercased()).inserted }
        return unique.isEmpty ? nil : unique.joined(separator: ", ")
    }

    private static func keywords(_ value: Any?) -> [String] {
        let items = list(value).flatMap { $0.split(separator: ",").map { HTMLText.clean(String($0)) } }
            .filter { !RecipeDraft.isBlank($0) && $0.count <= RecipeDraft.Limits.keywordLength }
        var seen = Set<String>()
        return Array(items.filter { seen.insert($0.lowercased()).inserted }.prefix(RecipeDraft.Limits.keywords))
    }

    private static func author(_ value: Any?) -> String? {
        switch value {
        case let list as [Any]:
            // Each name once (pages repeat the same author for every part of a recipe).
            var seen = Set<String>()
            let names = list.compactMap { author($0) }.filter { seen.insert($0.lowercased()).inserted }
            return names.isEmpty ? nil : names.joined(separator: ", ")
        default:
            // A profile address for a name ("https://e.com/contributors/claire-saffitz"): the name it spells.
            guard let name = text(value) else { return nil }
            guard name.hasPrefix("http://") || name.hasPrefix("https://"), let last = URL(string: name)?.lastPathComponent,
                  last.count > 2, last.contains(where: \.isLetter) else { return name }
            return last.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: " ")
        }
    }

    private static func images(_ value: Any?) -> [String] {
        switch value {
        case let string as String: return string.isEmpty ? [] : [string]
        case let list as [Any]:
            // In the page's order: the first is the one the recipe leads with (ImageChoice picks among sizes).
            return list.flatMap { images($0) }
        case let object as [String: Any]:
            return images(object["url"] ?? object["contentUrl"] ?? object["@id"])
        default: return []
        }
    }

    /// The sizes ImageObjects declare, by address.
    static func declaredSizes(_ value: Any?) -> [String: ImageChoice.Size] {
        switch value {
        case let list as [Any]: return list.prefix(maxImages).reduce(into: [:]) { $0.merge(declaredSizes($1)) { first, _ in first } }
        case let object as [String: Any]:
            let size = ImageChoice.Size(width: dimension(object["width"]), height: dimension(object["height"]))
            guard size.area != nil else { return [:] }
            return Dictionary(images(object).map { ($0, size) }, uniquingKeysWith: { first, _ in first })
        default: return [:]
        }
    }

    /// A declared pixel count: 1200, "1200", "1200px", {"@type": "QuantitativeValue", "value": 1200}.
    private static func dimension(_ value: Any?) -> Int? {
        switch value {
        case let number as Int: return number > 0 ? number : nil
        case let number as Double: return number >= 1 && number < 1e6 ? Int(number) : nil
        case let text as String: return Int(text.drop { !$0.isASCII || !$0.isNumber }.prefix { $0.isASCII && $0.isNumber }.prefix(6))
        case let object as [String: Any]: return dimension(object["value"] ?? object["maxValue"] ?? object["minValue"])
        default: return nil
        }
    }

    private static func nutritionFields(_ value: Any?) -> [String: String] {
        guard let object = value as? [String: Any] else { return [:] }
        var fields: [String: String] = [:]
        for (key, raw) in object where !key.hasPrefix("@") {
            // The key is the page's text too (it becomes the label: "fatContent" is "Fat"): cleaned as a value is,
            // so no control character (a NUL no stored text may hold) reaches the recipe through it.
            guard let name = text(key).map({ String($0.prefix(Self.nutritionKeyLength)) }), let value = text(raw) else { continue }
            fields[name] = value
        }
        return fields
    }

    /// The longest nutrition label kept from a page (schema.org's longest is "unsaturatedFatContent").
    static let nutritionKeyLength = 60

    /// "Calories: 580 kcal · Fat: 28 g · …" in a fixed, readable order.
    static func nutritionText(_ fields: [String: String]) -> String? {
        guard !fields.isEmpty else { return nil }
        let order = ["servingSize", "calories", "fatContent", "saturatedFatContent", "unsaturatedFatContent", "transFatContent",
                     "carbohydrateContent", "sugarContent", "fiberContent", "proteinContent", "cholesterolContent", "sodiumContent"]
        let keys = order.filter { fields[$0] != nil } + fields.keys.filter { !order.contains($0) }.sorted()
        return keys.map { key in
            let label = key.replacingOccurrences(of: "Content", with: "")
                .replacingOccurrences(of: "([a-z])([A-Z])", with: "$1 $2", options: .regularExpression)
            return label.prefix(1).uppercased() + label.dropFirst().lowercased() + ": " + fields[key]!
        }.joined(separator: " · ")
    }
}
